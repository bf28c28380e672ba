"""README.md is the front door and docs/ the manual: the generated reference is the code's, the commands the README
promises are CI's, every pointer the tool's messages give leads to a page, and the stack outputs the pages name
exist."""

import json
import re

import pytest
from docs_reference import render, stale_pages
from support.doc_pages import DOCS, pages
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.config.reference import codes_markdown, config_reference_markdown

README = (ROOT / "README.md").read_text()


def test_the_readme_is_short():
    assert len(README.splitlines()) < 200


def test_codes_table_matches_the_code():
    assert codes_markdown() in (DOCS / "reference" / "findings.md").read_text(), "run `make docs-reference`"


def test_config_reference_matches_the_model():
    assert config_reference_markdown() in (DOCS / "reference" / "config.md").read_text(), "run `make docs-reference`"


def test_every_generated_part_in_the_repository_is_the_codes_today():
    """The reference reads in the clone (issue 30): each page holds its generated parts, as config/schema.json
    holds the schema - and a page whose part the code has moved past fails here and in `make docs`."""
    assert [page.relative_to(ROOT).as_posix() for page in stale_pages()] == [], "run `make docs-reference`"
    assert all("<!-- end generated: " in page.read_text() for page in pages() if "<!-- generated: " in page.read_text())


def test_a_stale_or_unknown_part_is_refused(tmp_path):
    page = "text\n<!-- generated: pins -->\nold pins\n<!-- end generated: pins -->\nafter\n"
    written = render(page)
    assert "old pins" not in written and written.endswith("<!-- end generated: pins -->\nafter\n")
    assert render(written) == written  # writing twice changes nothing
    with pytest.raises(ValueError, match="unknown generated part"):
        render("<!-- generated: nothing -->\n")
    with pytest.raises(ValueError, match="not a marker line"):
        render("<!--generated: pins-->\n")
    with pytest.raises(ValueError, match="no <!-- generated: NAME --> line starts"):
        render("text\n<!-- end generated: pins -->\n")


def test_ci_runs_the_readme_test_command():
    assert "make test     # set up and run every test" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    # ... and `make test` builds the docs strictly, so CI fails on a broken link.
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: .*\bdocs\b", makefile, flags=re.M)
    assert re.search(r"^docs: .*\n(?:\t.*\n)*\t.*mkdocs build --strict", makefile, flags=re.M)


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    assert sorted(p.relative_to(DOCS).as_posix() for p in pages() if p.relative_to(DOCS).as_posix() not in nav) == []


# --- What the tool's messages point at. Product text names README sections ("README: Many teams", "README.md,
# section 'Removing a stack'"); the README's table maps each name to the page that holds it now. ---------------
POINTERS = README.split("## Sections the tool's messages name", 1)[1].split("\n## ", 1)[0]
ROWS = re.findall(r"^\| ([^|]+) \| \[[^]]+\]\(([^)]+)\) \|$", POINTERS, flags=re.M)
NAMES = {name.strip().lower(): target for names, target in ROWS for name in names.split(", ")}
README_MENTION = re.compile(r"README")


def _slug(heading: str) -> str:
    """MkDocs' (Python-Markdown toc) anchor of a heading."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_every_pointer_row_leads_to_a_page_and_its_section():
    assert len(ROWS) >= 10
    for _, target in ROWS:
        path, _, anchor = target.partition("#")
        page = ROOT / path
        assert page.is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, target


# What a reader reads that names the README or a page: the code's messages and comments, and the shipped configs'
# comments (config/dev.yaml once sent readers to a "README: Shared storage" that no row led anywhere).
SOURCES = (("cdk_app", "*.py"), ("constructs", "*.py"), ("config", "*.yaml"))


def _lines(*tops: tuple[str, str]):
    """Each source line with the next one joined to it: a pointer may wrap ("... (the README\n# says ...")."""
    for top, pattern in tops:
        for source in sorted((ROOT / top).rglob(pattern)):
            lines = source.read_text().splitlines()
            for number, line in enumerate(lines, 1):
                following = lines[number].lstrip(" #") if number < len(lines) else ""
                yield f"{source.relative_to(ROOT)}:{number}", line, f"{line} {following}"


def _mentions():
    return [(where, joined) for where, line, joined in _lines(*SOURCES) if README_MENTION.search(line)]


@pytest.mark.parametrize(("where", "line"), _mentions())
def test_every_readme_section_the_code_names_is_in_the_pointer_table(where, line):
    """A message, field description or comment that sends a reader to the README names a row of its table."""
    assert any(name in line.lower() for name in NAMES), f"{where}: {line.strip()}"


def test_the_pages_plan_names_exist_with_their_sections():
    """plan sends the reader straight to a page (and a section of it), not through the README's table."""
    from cdk_app.cli.plan import model

    for doc in (model.REMOVAL_DOC, model.QUOTA_DOC, model.EDITING_DOC, model.MOVE_DOC, model.STACK_REMOVAL_DOC):
        path, _, section = doc.partition(", section ")
        page = ROOT / path
        assert page.is_file(), doc
        if section:
            assert f"# {section.strip(chr(39))}\n" in page.read_text(), doc


def test_the_removal_page_says_what_plan_says_removing_a_team_does():
    """One account of a removal and a rename (running jobs, namespace, claims, file systems): plan's words are
    the page's, so the two cannot disagree again."""
    from cdk_app.cli.plan import model

    page = " ".join((ROOT / model.REMOVAL_DOC).read_text().split())
    assert model.REMOVED_TEAM.format(namespace="`hyperpod-ns-<team>`") in page
    assert model.RENAMED_TEAM in page
    assert model.RENAME_ORDER in page
    assert model.RENAME_ORDER.replace("two deploys are safer", "Two deploys are safer") in " ".join(
        (ROOT / "docs/how-to/edit-safely.md").read_text().split())


# How the docs name a stack output: OutputKey=='X', "output `X`", "X output", a <X> placeholder for its
# value, and "HyperPod-<env>-<stack>: X, Y" for what a deployed stack prints. Output names are CamelCase.
CAMEL = r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"
OUTPUT_MENTIONS = (rf"OutputKey=='({CAMEL})'", rf"[Oo]utputs?,? `({CAMEL})`", rf"`?\b({CAMEL})`? outputs?\b",
                   rf"<({CAMEL})>", r"HyperPod-[a-z<>-]+-(?:network|cluster|governance|batch|teams-\d+): ([^;\n]+)")


def output_mentions(text: str) -> set[str]:
    found = set()
    for pattern in OUTPUT_MENTIONS:
        for match in re.findall(pattern, text):
            found |= {name for name in re.split(r"[,.\s]+", match) if re.fullmatch(CAMEL, name)}
    return found


def test_output_mentions_are_found_as_the_docs_write_them():
    """The walkthrough once named outputs that never existed (issue 27); each form must be caught."""
    assert output_mentions("#    HyperPod-dev-cluster: KubeconfigCommand; HyperPod-dev-governance: TeamRoleJohn, "
                           "TeamRoleSmith.\n--role-arn <TeamRoleJohn> (the BatchTeamRoleArns output) "
                           "Output `TeamRoleArns` OutputKey=='VpcId'") == {
        "KubeconfigCommand", "TeamRoleJohn", "TeamRoleSmith", "BatchTeamRoleArns", "TeamRoleArns", "VpcId"}
    assert output_mentions("HyperPod-prod-governance: 4 DELETE, 3 update\nCloudFormation's 200-output limit") == set()


@pytest.mark.slow
@pytest.mark.synth
def test_every_output_the_docs_name_is_in_a_shipped_environment(tmp_path_factory):
    """Against the real CLI's synths of config/*.yaml (the ones the stack tests share)."""
    outputs = set()
    for config in sorted((ROOT / "config").glob("*.yaml")):
        for template in env_assembly(tmp_path_factory, config.stem).glob("*.template.json"):
            outputs |= set(json.loads(template.read_text()).get("Outputs", {}))
    named = output_mentions(README + "\n".join(page.read_text() for page in pages()))
    assert {"EksClusterName", "KubeconfigCommand", "TeamRoleArns", "BatchTeamRoleArns"} <= named
    assert sorted(named - outputs) == []


def test_every_docs_page_the_code_names_exists():
    """Messages such as HPK201's ("see the instance catalogue: docs/reference/instance-catalogue.md") and comments
    name pages by path; each must be one."""
    named = {match for _, line, _ in _lines(*SOURCES) for match in re.findall(r"docs/[\w/-]+\.md(?:#[\w-]+)?", line)}
    assert {"docs/reference/instance-catalogue.md", "docs/how-to/storage.md"} <= named
    assert sorted(path for path in named if not (ROOT / path.partition("#")[0]).is_file()) == []
    for path, _, anchor in (p.partition("#") for p in named if "#" in p):
        assert anchor in {_slug(h) for h in re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), flags=re.M)}, path


def test_a_marker_that_is_not_exactly_one_is_refused_not_left_as_a_comment():
    import docs_reference

    assert "| HPK001 |" in docs_reference.render("<!-- generated: findings -->\n")
    for near_miss in ("<!-- generated: findings --> \n", "  <!-- generated: findings -->\n", "<!--generated: cli-->\n"):
        with pytest.raises(ValueError, match="not a marker line"):
            docs_reference.render(near_miss)
    with pytest.raises(ValueError, match="unknown generated part 'nope'"):
        docs_reference.render("<!-- generated: nope -->\n")
    assert docs_reference.render("A line `<!-- generated: NAME -->` in prose.\n") == (
        "A line `<!-- generated: NAME -->` in prose.\n")

"""README.md is the front door: its commands, codes and config reference must match the code."""

from support.paths import ROOT

from cdk_app.config.reference import codes_markdown, config_reference_markdown

README = (ROOT / "README.md").read_text()


def test_codes_table_matches_the_code():
    assert codes_markdown() in README, "regenerate the codes table from cdk_app/config/reference.py"


def test_config_reference_matches_the_model():
    assert config_reference_markdown() in README, "regenerate the config reference from cdk_app/config/reference.py"


def test_ci_runs_the_readme_test_command():
    assert "make test     # set up and run every test" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()

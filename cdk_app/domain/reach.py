"""How far each team can go: its quota, plus what it may borrow from teams that lend.

This is the ceiling the compute allocations allow, not a scheduler: whether a team reaches it depends on
what the lending teams use at the time. Per instance type:
- DontLend and Lend teams never borrow: their ceiling is their quota.
- A LendAndBorrow team may borrow up to borrow_limit percent of its quota, and no more than the other
  allocations that lend (Lend or LendAndBorrow teams, and the shared pool) hold together.
A team borrows only on instance types it has a quota for: the limit is a percent of that quota.
Disabled allocations are left out, both as borrowers and as lenders.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig
from cdk_app.domain.capacity import Resources, reservations, shared_pool_quota

LENDING = ("Lend", "LendAndBorrow")


@dataclass(frozen=True, slots=True)
class TeamReach:
    team: str
    instance_type: str
    strategy: str
    borrow_limit: int | None  # percent; None where the team does not borrow
    quota: Resources
    reach: Resources
    # "borrow limit" or "lenders": what stops the team borrowing more; None if it does not borrow.
    capped_by: str | None

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "instance_type": self.instance_type, "strategy": self.strategy,
                "borrow_limit": self.borrow_limit, "quota": self.quota.to_json(), "reach": self.reach.to_json(),
                "capped_by": self.capped_by}


def team_reach(config: KitConfig) -> list[TeamReach]:
    """One row per enabled team and instance type of its quota, in config order."""
    held = [(t, reservations(t.quota)) for t in config.teams if t.enabled]
    # What all lending allocations hold per instance type; a team never borrows from itself, so its own
    # share comes off again below (one pass, not one per team: validate runs after every edit).
    lenders = [reserved for t, reserved in held if t.sharing_strategy in LENDING]
    if config.shared_pool is not None:
        lenders.append(reservations(shared_pool_quota(config)))
    lent: dict[str, Resources] = {}
    for holding in lenders:
        for itype, amount in holding.items():
            lent[itype] = lent.get(itype, Resources()) + amount
    rows = []
    for team, reserved in held:
        for itype, quota in reserved.items():
            if team.sharing_strategy != "LendAndBorrow":
                rows.append(TeamReach(team.name, itype, team.sharing_strategy, None, quota, quota, None))
                continue
            limit = team.borrow_limit or DEFAULT_BORROW_LIMIT
            allowed = quota.scaled(Fraction(limit, 100))
            borrowed = allowed.smaller(lent[itype] - quota)
            capped_by = "borrow limit" if borrowed == allowed else "lenders"
            rows.append(TeamReach(team.name, itype, team.sharing_strategy, limit, quota, quota + borrowed, capped_by))
    return rows

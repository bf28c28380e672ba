"""Where each availability zone's subnets sit in a new VPC.

The place comes from the zone id's own number (use1-az4 -> 4), never from the zone's position in the
config: CidrBlock and AvailabilityZoneId of AWS::EC2::Subnet are create-only, so a position-based
layout would replace every subnet after a reordered or removed zone. The VPC is split in eight: eighth
N-1 is the private subnet of zone azN, and the last eighth, split in eight again, holds the small public
(NAT) subnets, slot N-1 each. Zone ids go up to az6 today; az7 is the last number that fits.

Pure Python (no aws_cdk): the validator checks the same limit (HPK120).
"""

from __future__ import annotations

import ipaddress
import re

MAX_ZONE_NUMBER = 7
_ZONE_NUMBER = re.compile(r"-az([0-9]{1,2})$")


def zone_number(zone_id: str) -> int:
    """use1-az4 -> 4."""
    match = _ZONE_NUMBER.search(zone_id)
    if match is None:
        raise ValueError(f"{zone_id!r} is not an availability zone id (e.g. use1-az4)")
    return int(match.group(1))


def subnet_cidrs(vpc_cidr: str, zone_id: str) -> tuple[str, str]:
    """(private, public) CIDR of `zone_id` in a VPC of `vpc_cidr`. A /16 gives a /19 and a /22."""
    number = zone_number(zone_id)
    if not 1 <= number <= MAX_ZONE_NUMBER:
        raise ValueError(f"{zone_id}: zone number {number} has no subnet slot (az1 to az{MAX_ZONE_NUMBER} fit)")
    eighths = list(ipaddress.ip_network(vpc_cidr).subnets(prefixlen_diff=3))
    public = list(eighths[7].subnets(prefixlen_diff=3))
    return str(eighths[number - 1]), str(public[number - 1])

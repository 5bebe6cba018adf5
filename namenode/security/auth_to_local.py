"""Kerberos principal -> local user name: ``hadoop.security.auth_to_local``, as Hadoop's
``org.apache.hadoop.security.authentication.util.KerberosName`` applies it.

A principal ``service/host@REALM`` (or ``user@REALM``) is split into its parameters
``$0`` = realm, ``$1`` = first component, ``$2`` = second. The rules, one per line (any
whitespace between them), are tried in order and the first that gives a name wins:

* ``DEFAULT``: a principal of the default realm -> its first component.
* ``RULE:[n:format](match)s/pattern/replacement/g/L``: applies to principals with exactly
  ``n`` components; ``format`` builds a string from ``$0``, ``$1``, ``$2``; the optional
  ``(match)`` must match all of it (Java's ``Matcher.matches``); the optional sed-style
  substitution replaces the first match (every match with ``g``; ``$1`` in the replacement
  is a group, as Java's ``Matcher.replaceAll``); ``/L`` lower-cases the result.

Under the ``hadoop`` mechanism (``hadoop.security.auth_to_local.mechanism``, the default) a
result still holding ``/`` or ``@`` is refused, and a principal no rule applies to raises
``NoMatchingRule``; under ``mit`` such a principal maps to itself. A name without a realm is
already short and maps to itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nnlite.client import java_classes as java
from nnlite.namenode import errors

RULE_PARSER = re.compile(
    r"\s*((DEFAULT)|(RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?")
NAME_PARSER = re.compile(r"([^/@]+)(/([^/@]+))?(@([^/@]+))?")
PARAMETER = re.compile(r"([^$]*)(\$(\d*))?")
NON_SIMPLE = re.compile(r"[/@]")
MECHANISMS = ("hadoop", "mit")


class AuthToLocalError(errors.NamenodeError):
    """A principal that cannot be mapped to a local user."""
    JAVA_CLASS = java.ACCESS_CONTROL


class NoMatchingRule(AuthToLocalError):
    """``KerberosName.NoMatchingRule``: no rule gives a simple name for the principal."""


class BadFormatString(AuthToLocalError):
    """``KerberosName.BadFormatString``: a rule's format names a component the principal
    lacks."""


class MalformedName(AuthToLocalError):
    """Not a Kerberos name (``Malformed Kerberos name``)."""


class InvalidRules(ValueError):
    """``hadoop.security.auth_to_local`` that does not parse (``Invalid rule: ...``)."""


@dataclass(frozen=True, slots=True)
class KerberosName:
    """A principal's parts: ``service[/host][@realm]``."""
    service: str
    host: str | None
    realm: str | None

    @classmethod
    def parse(cls, name: str) -> KerberosName:
        match = NAME_PARSER.fullmatch(name)
        if match is None:
            if "@" in name:
                raise MalformedName(f"Malformed Kerberos name: {name}")
            return cls(name, None, None)
        return cls(match.group(1), match.group(3), match.group(5))

    def __str__(self) -> str:
        host = f"/{self.host}" if self.host is not None else ""
        realm = f"@{self.realm}" if self.realm is not None else ""
        return f"{self.service}{host}{realm}"

    def params(self) -> list[str]:
        """``$0`` (the realm), ``$1``, ``$2``: what the rules' formats refer to."""
        base = [self.realm or "", self.service]
        return base + [self.host] if self.host is not None else base


@dataclass(frozen=True)
class Rule:
    """One rule; ``components`` is None for ``DEFAULT``."""
    components: int | None = None
    format: str = ""
    match: re.Pattern | None = None
    pattern: re.Pattern | None = None
    replacement: str = ""
    repeat: bool = False
    lower: bool = False

    def __str__(self) -> str:
        if self.components is None:
            text = "DEFAULT"
        else:
            text = f"RULE:[{self.components}:{self.format}]"
            if self.match is not None:
                text += f"({self.match.pattern})"
            if self.pattern is not None:
                text += f"s/{self.pattern.pattern}/{self.replacement}/"
                text += "g" if self.repeat else ""
        return text + ("/L" if self.lower else "")

    def apply(self, params: list[str], default_realm: str, mechanism: str) -> str | None:
        """The short name this rule gives, or None when it does not apply."""
        result = None
        if self.components is None:
            if params[0] == default_realm:
                result = params[1]
        elif len(params) - 1 == self.components:
            base = replace_parameters(self.format, params)
            if self.match is None or self.match.fullmatch(base):
                result = base if self.pattern is None else _substitute(
                    self.pattern, self.replacement, base, self.repeat)
        if result is not None and NON_SIMPLE.search(result) and mechanism == "hadoop":
            raise NoMatchingRule(f"Non-simple name {result} after auth_to_local rule {self}")
        if self.lower and result is not None:
            result = result.lower()
        return result


def parse_rules(text: str) -> list[Rule]:
    """``KerberosName.parseRules``: every rule of ``text``, in order."""
    rules: list[Rule] = []
    remaining = text.strip()
    while remaining:
        found = RULE_PARSER.match(remaining)
        if found is None or found.end() == 0:
            raise InvalidRules(f"Invalid rule: {remaining}")
        rules.append(_rule(found))
        remaining = remaining[found.end():]
    return rules


def _rule(found: re.Match) -> Rule:
    lower = found.group(12) == "L"
    if found.group(2) is not None:
        return Rule(lower=lower)
    try:
        return Rule(components=int(found.group(4)), format=found.group(5),
                    match=None if found.group(7) is None else re.compile(found.group(7)),
                    pattern=None if found.group(9) is None else re.compile(found.group(9)),
                    replacement=found.group(10) or "", repeat=found.group(11) == "g",
                    lower=lower)
    except (ValueError, re.error) as error:
        raise InvalidRules(f"Invalid rule: {found.group(0).strip()}: {error}") from error


def replace_parameters(fmt: str, params: list[str]) -> str:
    """``Rule.replaceParameters``: ``$n`` in ``fmt`` -> ``params[n]``."""
    out, start = [], 0
    while start < len(fmt):
        found = PARAMETER.match(fmt, start)
        if found is None or found.end() == start:
            break
        out.append(found.group(1))
        number = found.group(3)
        if number is not None:
            if not number:
                raise BadFormatString(f"bad format in username mapping in {number}")
            index = int(number)
            if index >= len(params):
                raise BadFormatString(f"index {index} from {fmt} is outside of the valid "
                                      f"range 0 to {len(params) - 1}")
            out.append(params[index])
        start = found.end()
    return "".join(out)


def _substitute(pattern: re.Pattern, replacement: str, base: str, repeat: bool) -> str:
    """Java's ``replaceFirst``/``replaceAll``: ``$n`` is a group, ``\\x`` a literal x."""
    return pattern.sub(lambda found: _java_replacement(found, replacement), base,
                       count=0 if repeat else 1)


def _java_replacement(found: re.Match, replacement: str) -> str:
    out, i, groups = [], 0, found.re.groups
    while i < len(replacement):
        char = replacement[i]
        if char == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1])
            i += 2
        elif char == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            number, i = int(replacement[i + 1]), i + 2
            while (i < len(replacement) and replacement[i].isdigit()
                   and number * 10 + int(replacement[i]) <= groups):
                number, i = number * 10 + int(replacement[i]), i + 1
            if number > groups:
                raise BadFormatString(f"No group {number} in {found.re.pattern}")
            out.append(found.group(number) or "")
        else:
            out.append(char)
            i += 1
    return "".join(out)


class AuthToLocal:
    """The rules of ``hadoop.security.auth_to_local``, parsed once, for a default realm."""

    def __init__(self, rules: str = "DEFAULT", default_realm: str = "",
                 mechanism: str = "hadoop"):
        mechanism = (mechanism or "hadoop").lower()
        if mechanism not in MECHANISMS:
            raise InvalidRules(f"Invalid rule mechanism: {mechanism}")
        self.rules = parse_rules(rules or "DEFAULT")
        self.default_realm = default_realm
        self.mechanism = mechanism

    def short_name(self, principal: str) -> str:
        """``KerberosName.getShortName``: the local user ``principal`` maps to."""
        name = KerberosName.parse(principal)
        if name.host is None and name.realm is None:
            return name.service
        params = name.params()
        for rule in self.rules:
            result = rule.apply(params, self.default_realm, self.mechanism)
            if result is not None:
                return result
        if self.mechanism == "hadoop":
            raise NoMatchingRule(f"No rules applied to {name}")
        return str(name)

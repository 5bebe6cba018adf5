"""``nnlite``: the command line, one click group over ``commands/`` (its ``__init__.py`` is the
map). Whatever error escapes a command becomes one line and an exit code in
``commands/support.py``; the generic options (``--user``, ``--namenode``, ``--conf``, ``-D``)
are taken at the top, on a group or after the command. ``python -m nnlite.cli`` runs the same
group.
"""

from __future__ import annotations

import logging
import sys

import click

from nnlite.commands.catalog import catalog_group
from nnlite.commands.daemons import (
    format_cmd,
    namenode_cmd,
    run_cmd,
    run_ha_cmd,
    run_secure_cmd,
    secondary_cmd,
)
from nnlite.commands.dfs import dfs_group, dfsadmin_group
from nnlite.commands.haadmin import haadmin_group
from nnlite.commands.support import CommandGroup, accept_generic_options
from nnlite.commands.tools import analyze_cmd, edits_group, fsimage_group, oev_cmd, oiv_cmd


def setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@click.group(cls=CommandGroup)
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
def main(verbose: bool) -> None:
    """nnlite: an HDFS-style metadata store (namespace, edits log, fsimage, WebHDFS)."""
    setup_logging(verbose)


for command in (format_cmd, namenode_cmd, run_cmd, run_ha_cmd, run_secure_cmd, secondary_cmd,
                oiv_cmd, oev_cmd,
                edits_group, fsimage_group, analyze_cmd, dfsadmin_group, haadmin_group, dfs_group,
                catalog_group):
    main.add_command(command)
accept_generic_options(main)    # --user/--namenode before a subcommand too, at every level


if __name__ == "__main__":
    main()

"""``/catalog/v1/<path>?op=...``: the catalog on the namenode's HTTP server.

    GET  LS                       {"Checkpoints": [row...]}           every checkpoint under path
    GET  SHOW                     {"Checkpoint": {...}}               per batch and per operator
    GET  LATEST                   {"Latest": {...}}                   last restorable batch / id
    GET  VALIDATE                 {"Validation": {...}}               issues; "restorable"
    POST RETAIN&keep=N            {"Retention": {...}}
    POST ROLLBACK&tobatch=N       {"Rollback": {...}}
    POST PIN&batch=N | UNPIN      {"Pins": {...}}
    POST GC[&dryrun=true]         {"GC": {...}}                       path is the root
    POST BEGIN                    {"JobCheckpoint": {"id", "path"}}   path is the job dir
    POST COMPLETE&id=N[&parts=K]  {"JobCheckpoint": {...}}
    POST ABORT&id=N               {"JobCheckpoint": {...}}

Identity is WebHDFS's (``user.name``, ``doas``); errors are WebHDFS ``RemoteException``s.
Reads run in a worker thread (they take the lock per checkpoint); changes run on the loop as
namespace requests (see service.py). PUT is accepted wherever POST is.
"""

from __future__ import annotations

import asyncio
import logging
from types import EllipsisType
from typing import overload

from nnlite.catalog.errors import InvalidRequestError
from nnlite.catalog.service import CatalogService, parse_policy
from nnlite.namenode.http import remote
from nnlite.namenode.http.webhdfs_json import dumps
from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.namespace import paths

log = logging.getLogger(__name__)

PREFIX = "/catalog/v1"
READS = {"LS": ("Checkpoints", "ls"), "SHOW": ("Checkpoint", "show"),
         "LATEST": ("Latest", "latest"), "VALIDATE": ("Validation", "validate")}


class CatalogHttp:
    def __init__(self, service: CatalogService, webhdfs):
        self.service = service
        self.webhdfs = webhdfs            # for WebHDFS's identity rules (user.name, doas)
        self.changes = {
            "RETAIN": ("Retention", lambda r, p, u: service.retain(p, _int(r, "keep"), u)),
            "ROLLBACK": ("Rollback",
                         lambda r, p, u: service.rollback(p, _int(r, "tobatch"), u)),
            "PIN": ("Pins", lambda r, p, u: service.pin(p, _int(r, "batch"), True, u)),
            "UNPIN": ("Pins", lambda r, p, u: service.pin(p, _int(r, "batch"), False, u)),
            "GC": ("GC", lambda r, p, u: service.gc(p, u, _bool(r, "dryrun"))),
            "BEGIN": ("JobCheckpoint", lambda r, p, u: service.begin(p, u)),
            "COMPLETE": ("JobCheckpoint", lambda r, p, u: service.complete(
                p, _int(r, "id"), _int(r, "parts", None), u)),
            "ABORT": ("JobCheckpoint", lambda r, p, u: service.abort(p, _int(r, "id"), u)),
        }

    def __call__(self, req: Request):
        try:
            op = (req.param("op") or "").upper()
            path = req.path[len(PREFIX):] or "/"
            user = self.webhdfs.identify(req)
            if req.method in ("GET", "HEAD") and op in READS:
                key, name = READS[op]
                return self._read(key, getattr(self.service, name), path, user)
            if req.method in ("POST", "PUT") and op in self.changes:
                key, change = self.changes[op]
                return self._answer(key, change(req, path, user))
            raise InvalidRequestError(
                f"Unknown catalog operation {op[:40]!r} for {req.method[:10]}: reads (GET) are "
                f"{', '.join(READS)}; changes (POST) are {', '.join(self.changes)}")
        except Exception as exc:
            return remote.from_error(exc)

    async def _read(self, key: str, fn, path: str, user: str) -> Response:
        try:
            value = await asyncio.get_running_loop().run_in_executor(None, fn, path, user)
        except Exception as exc:
            return remote.from_error(exc)
        return Response(200, dumps({key: value}))

    async def _answer(self, key: str, change) -> Response:
        try:
            value = await change
        except Exception as exc:
            return remote.from_error(exc)
        return Response(200, dumps({key: value}))


@overload
def _int(req: Request, name: str) -> int: ...


@overload
def _int(req: Request, name: str, default: None) -> int | None: ...


def _int(req: Request, name: str, default: int | None | EllipsisType = ...) -> int | None:
    """The integer parameter ``name``; without a ``default`` it is required."""
    raw = req.param(name)
    if raw is None or raw == "":
        if default is ...:
            raise InvalidRequestError(f"the {name} parameter is required")
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidRequestError(f'Invalid value for the {name} parameter: "{raw[:40]}" is '
                                  f"not an integer") from None


def _bool(req: Request, name: str) -> bool:
    raw = (req.param(name) or "false").lower()
    if raw not in ("true", "false"):
        raise InvalidRequestError(f'Invalid value for the {name} parameter: "{raw[:40]}" '
                                  f"(true or false)")
    return raw == "true"


def install(namenode) -> CatalogService:
    """Compose the catalog into a started ``namenode.daemon.Namenode``: the HTTP prefix, the
    status page's section, and the retention policy of ``nnlite.catalog.retain``."""
    config = namenode.config
    app = namenode.app
    service = CatalogService(namenode.fs, namenode.committer, namenode.blocks, app.data.leases,
                             quiet=config.float("nnlite.catalog.quiet"),
                             tmp_ttl=config.float("nnlite.catalog.gc.tmp-ttl"),
                             rdd_ttl=config.float("nnlite.catalog.gc.rdd-ttl"),
                             roots=[paths.normalize(r.strip()) for r in
                                    config.get("nnlite.catalog.roots").split(",") if r.strip()])
    app.mount(PREFIX, CatalogHttp(service, app.webhdfs))
    app.catalog = service
    policy = parse_policy(config.get("nnlite.catalog.retain"))
    if policy:
        namenode.spawn(_apply_policy_forever(service, policy,
                                             config.float("nnlite.catalog.policy.interval"),
                                             config.superuser()))
    return service


async def _apply_policy_forever(service: CatalogService, policy: dict, interval: float,
                                user: str) -> None:
    while True:
        await asyncio.sleep(interval)
        try:
            await service.apply_policy(policy, user)
        except Exception:
            log.exception("catalog policy failed (retried in %g s)", interval)

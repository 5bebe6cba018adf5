import asyncio

from nnlite.namenode.http import remote
from nnlite.namenode.http.server import HttpServer
from nnlite.namenode.http.wire import Response


def test_idle_connection_is_closed():
    async def main():
        server = HttpServer(lambda r: Response(200, b"ok"), remote.parse_error_response,
                            idle_timeout=0.4)
        port = await server.start("127.0.0.1", 0)
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(b"GET /x HTTP/1.1\r\nHost: a\r\n")   # a half-sent request, then silence
        await w.drain()
        data = await asyncio.wait_for(r.read(), 5)       # EOF once the reaper closes it
        await server.stop(0.1)
        return data
    assert asyncio.run(main()) == b""

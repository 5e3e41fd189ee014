"""The three interfaces of a WildAWM world day, all over the same day folder.

- `web`: server-rendered storefront, webmail, calendar and bank (`web_life`) on 127.0.0.1;
- `mcp_server`: chat, direct-message, email, flights and accounts tools with the official `mcp` SDK;
- `cli`: `WorldShell`, a bash shell over ``home/`` in the sandbox;
- `health`: `check_live(day_dir)`; `serve`: `serve_world(day_dir)` for ``envpipeline worlds serve``.

Submodules are imported on use (the web and MCP stacks are not needed by the world core).
"""

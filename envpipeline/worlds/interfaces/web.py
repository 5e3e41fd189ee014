"""The web GUI of a world day: a server-rendered storefront, webmail, calendar and bank (Starlette, no JS).

Routes (every page is plain HTML with real ``<form>``s, ``<label>``s and stable element ids):

    GET  /                      products, a search form (``q``) and a category filter
    GET  /product/<sku>         one product with an add-to-cart form
    POST /cart/add              form: sku, quantity  -> 303 /cart   (409 page beyond the stock)
    GET  /cart                  cart lines, remove buttons, the checkout form
    POST /cart/remove           form: sku            -> 303 /cart
    POST /checkout              -> 303 /orders/<order_number>       (409 page when out of stock)
    GET  /orders, /orders/<n>   placed orders
    GET  /mail?folder=inbox     inbox | sent | archive
    GET  /mail/<id>             one message (marks it read)
    POST /mail/<id>/archive     -> 303 /mail
    GET  /mail/compose          form: to, subject, body (``?to=&subject=`` prefill it)
    POST /mail/send             -> a 'sent' row, 303 /mail?folder=sent
    /calendar..., /bank...      the calendar and bank pages (`interfaces.web_life`)

Writes go straight to the day folder's ``apps/shop.sqlite`` and ``apps/mail.sqlite``: serve a
working copy of the world the agent acts on.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from urllib.parse import quote, urlencode

from envpipeline.errors import MissingExtraError
from envpipeline.worlds.interfaces._serving import BackgroundServer
from envpipeline.worlds.interfaces.web_life import life_routes
from envpipeline.worlds.lifestore import LifeStore
from envpipeline.worlds.worldstore import MAIL_FOLDERS, WorldInputError

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

STYLE = (
    "body{font-family:sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}"
    "nav a{margin-right:1rem}table{border-collapse:collapse}td,th{padding:.25rem .5rem;text-align:left}"
    ".unread{font-weight:bold}.error{color:#a00}label{display:block;margin-top:.5rem}"
)


def _money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    nav = (
        '<nav><a id="nav-shop" href="/">Shop</a><a id="nav-cart" href="/cart">Cart</a>'
        '<a id="nav-orders" href="/orders">Orders</a><a id="nav-mail" href="/mail">Mail</a>'
        '<a id="nav-compose" href="/mail/compose">Compose</a><a id="nav-calendar" href="/calendar">Calendar</a>'
        '<a id="nav-bank" href="/bank">Bank</a></nav>'
    )
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<style>{STYLE}</style></head><body>{nav}<h1 id="page-title">{escape(title)}</h1>{body}</body></html>'
    )
    return HTMLResponse(html, status_code=status)


def _error(error: WorldInputError) -> HTMLResponse:
    titles = {400: "Invalid request", 404: "Not found", 409: "Conflict"}
    body = f'<p id="error" class="error" data-status="{error.status}">{escape(str(error))}</p>'
    return _page(
        titles.get(error.status, "Error"),
        body + '<p><a id="back" href="/">Back to the shop</a></p>',
        error.status,
    )


def _add_form(sku: str, in_stock: bool, suffix: str = "") -> str:
    disabled = "" if in_stock else " disabled"
    return (
        f'<form method="post" action="/cart/add" id="add-form-{escape(sku)}{suffix}">'
        f'<input type="hidden" name="sku" value="{escape(sku)}">'
        f'<input type="hidden" name="quantity" value="1">'
        f'<button type="submit" id="add-{escape(sku)}{suffix}"{disabled}>Add to cart</button></form>'
    )


def create_web_app(day_dir: str | Path | LifeStore, clock: Callable[[], str] | None = None) -> Starlette:
    """The storefront + webmail ASGI app over one day folder (or over `day_dir` itself when it is a
    store: the app then follows the store's `rebind`)."""
    store = day_dir if isinstance(day_dir, LifeStore) else LifeStore(day_dir, clock)

    def handled(view: Callable) -> Callable:
        async def endpoint(request: Request) -> Response:
            try:
                return await view(request)
            except WorldInputError as e:
                return _error(e)

        return endpoint

    async def home(request: Request) -> Response:
        q, category = request.query_params.get("q", ""), request.query_params.get("category", "")
        options = "".join(
            f'<option value="{escape(c)}"{" selected" if c == category else ""}>{escape(c)}</option>'
            for c in store.categories()
        )
        search = (
            '<form method="get" action="/" id="search-form" role="search">'
            f'<label for="search">Search</label><input id="search" name="q" type="search" value="{escape(q)}">'
            '<label for="category">Category</label><select id="category" name="category">'
            f'<option value="">All categories</option>{options}</select>'
            '<button type="submit" id="search-submit">Search</button></form>'
        )
        rows = "".join(
            f'<tr id="product-{escape(p["sku"])}"><td><a id="product-link-{escape(p["sku"])}" '
            f'href="/product/{quote(p["sku"])}">{escape(p["name"])}</a></td><td>{escape(p["category"] or "")}</td>'
            f"<td>{_money(p['price_cents'])}</td><td>{'in stock' if p['stock'] > 0 else 'out of stock'}</td>"
            f"<td>{_add_form(p['sku'], p['stock'] > 0)}</td></tr>"
            for p in store.products(q, category)
        )
        table = (
            '<table id="products"><thead><tr><th>Product</th><th>Category</th><th>Price</th><th>Stock</th>'
            f"<th></th></tr></thead><tbody>{rows}</tbody></table>"
            if rows
            else '<p id="no-products">No products match.</p>'
        )
        return _page("Shop", search + table)

    async def product(request: Request) -> Response:
        p = store.product(request.path_params["sku"])
        sku = escape(p["sku"])
        stock = f"{p['stock']} in stock" if p["stock"] > 0 else "Out of stock"
        form = (
            f'<form method="post" action="/cart/add" id="add-to-cart-form"><input type="hidden" name="sku" '
            f'value="{sku}"><label for="quantity">Quantity</label><input id="quantity" name="quantity" '
            f'type="number" min="1" value="1"><button type="submit" id="add-to-cart"'
            f"{'' if p['stock'] > 0 else ' disabled'}>Add to cart</button></form>"
        )
        body = (
            f'<p id="product-sku">SKU {sku}</p><p id="product-category">{escape(p["category"] or "")}</p>'
            f'<p id="product-price">{_money(p["price_cents"])}</p><p id="product-stock">{stock}</p>'
            f'<p id="product-description">{escape(p["description"] or "")}</p>'
            f'<p id="product-image" role="img" aria-label="{escape(p["image_alt"] or "")}"></p>{form}'
        )
        return _page(p["name"], body)

    async def cart_add(request: Request) -> Response:
        form = await request.form()
        try:
            quantity = int(str(form.get("quantity", "1")) or "1")
        except ValueError as e:
            raise WorldInputError("quantity must be a whole number") from e
        store.add_to_cart(str(form.get("sku", "")), quantity)
        return RedirectResponse("/cart", status_code=303)

    async def cart(request: Request) -> Response:
        lines = store.cart()
        if not lines:
            return _page("Cart", '<p id="cart-empty">Your cart is empty.</p>')
        rows = "".join(
            f'<tr id="cart-item-{escape(x["sku"])}"><td>{escape(x["name"])}</td>'
            f'<td class="quantity">{x["quantity"]}</td><td>{_money(x["line_cents"])}</td>'
            f'<td><form method="post" action="/cart/remove" id="remove-form-{escape(x["sku"])}">'
            f'<input type="hidden" name="sku" value="{escape(x["sku"])}">'
            f'<button type="submit" id="remove-{escape(x["sku"])}">Remove</button></form></td></tr>'
            for x in lines
        )
        total = sum(x["line_cents"] for x in lines)
        body = (
            f'<table id="cart"><thead><tr><th>Product</th><th>Quantity</th><th>Total</th><th></th></tr>'
            f'</thead><tbody>{rows}</tbody></table><p id="cart-total">Total {_money(total)}</p>'
            '<form method="post" action="/checkout" id="checkout-form">'
            '<button type="submit" id="checkout">Place order</button></form>'
        )
        return _page("Cart", body)

    async def cart_remove(request: Request) -> Response:
        store.remove_from_cart(str((await request.form()).get("sku", "")))
        return RedirectResponse("/cart", status_code=303)

    async def checkout(request: Request) -> Response:
        order = store.checkout()
        return RedirectResponse(f"/orders/{quote(order['order_number'])}", status_code=303)

    async def orders(request: Request) -> Response:
        rows = "".join(
            f'<tr id="order-{escape(o["order_number"])}"><td><a href="/orders/{quote(o["order_number"])}">'
            f"{escape(o['order_number'])}</a></td><td>{escape(o['status'])}</td><td>{_money(o['total_cents'])}</td>"
            f"<td>{escape(o['placed_at'] or '')}</td></tr>"
            for o in store.orders()
        )
        return _page(
            "Orders",
            f'<table id="orders"><tbody>{rows}</tbody></table>'
            if rows
            else '<p id="no-orders">No orders yet.</p>',
        )

    async def order(request: Request) -> Response:
        o = store.order(request.path_params["number"])
        body = (
            f'<p>Order <span id="order-number">{escape(o["order_number"])}</span></p>'
            f'<p>Status <span id="order-status">{escape(o["status"])}</span></p>'
            f'<p>Total <span id="order-total">{_money(o["total_cents"])}</span></p>'
            f'<pre id="order-items">{escape(o["items_json"] or "")}</pre>'
        )
        return _page(f"Order {o['order_number']}", body)

    async def mail(request: Request) -> Response:
        folder = request.query_params.get("folder", "inbox")
        messages = store.mail_list(folder)
        folders = "".join(
            f'<a id="folder-{f}" href="/mail?folder={f}"{" aria-current=page" if f == folder else ""}>{f}</a> '
            for f in MAIL_FOLDERS
        )
        rows = "".join(
            f'<tr id="message-{m["id"]}" class="{"read" if m["is_read"] else "unread"}">'
            f"<td>{escape(m['sender'] if folder != 'sent' else m['recipients'] or '')}</td>"
            f'<td><a id="message-link-{m["id"]}" href="/mail/{m["id"]}">{escape(m["subject"] or "(no subject)")}'
            f"</a></td><td>{escape(m['sent_at'] or '')}</td></tr>"
            for m in messages
        )
        table = (
            f'<table id="messages"><tbody>{rows}</tbody></table>'
            if rows
            else '<p id="no-messages">Empty.</p>'
        )
        return _page(f"Mail: {folder}", f'<p id="folders">{folders}</p>{table}')

    async def message(request: Request) -> Response:
        m = store.mail_read(int(request.path_params["id"]))
        reply = urlencode({"to": m["sender"] or "", "subject": "Re: " + (m["subject"] or "")})
        body = (
            f'<p>From <span id="message-from">{escape(m["sender"] or "")}</span></p>'
            f'<p>To <span id="message-to">{escape(m["recipients"] or "")}</span></p>'
            f'<p>Date <span id="message-date">{escape(m["sent_at"] or "")}</span></p>'
            f'<h2 id="message-subject">{escape(m["subject"] or "")}</h2>'
            f'<pre id="message-body">{escape(m["body"] or "")}</pre>'
            f'<p><a id="reply" href="/mail/compose?{escape(reply)}">Reply</a></p>'
            f'<form method="post" action="/mail/{m["id"]}/archive" id="archive-form">'
            '<button type="submit" id="archive">Archive</button></form>'
        )
        return _page(m["subject"] or "(no subject)", body)

    async def archive(request: Request) -> Response:
        store.mail_archive(int(request.path_params["id"]))
        return RedirectResponse("/mail", status_code=303)

    async def compose(request: Request) -> Response:
        to, subject = request.query_params.get("to", ""), request.query_params.get("subject", "")
        body = (
            f'<p>From <span id="compose-from">{escape(store.address)}</span></p>'
            '<form method="post" action="/mail/send" id="compose-form">'
            f'<label for="to">To</label><input id="to" name="to" type="text" value="{escape(to)}" required>'
            f'<label for="subject">Subject</label><input id="subject" name="subject" type="text" '
            f'value="{escape(subject)}" required>'
            '<label for="body">Message</label><textarea id="body" name="body" rows="8" required></textarea>'
            '<button type="submit" id="send">Send</button></form>'
        )
        return _page("Compose", body)

    async def send(request: Request) -> Response:
        form = await request.form()
        store.mail_send(str(form.get("to", "")), str(form.get("subject", "")), str(form.get("body", "")))
        return RedirectResponse("/mail?folder=sent", status_code=303)

    async def health(request: Request) -> Response:
        return Response("ok", media_type="text/plain")

    routes = [
        Route("/", handled(home)),
        Route("/healthz", health),
        Route("/product/{sku}", handled(product)),
        Route("/cart", handled(cart)),
        Route("/cart/add", handled(cart_add), methods=["POST"]),
        Route("/cart/remove", handled(cart_remove), methods=["POST"]),
        Route("/checkout", handled(checkout), methods=["POST"]),
        Route("/orders", handled(orders)),
        Route("/orders/{number}", handled(order)),
        Route("/mail", handled(mail)),
        Route("/mail/compose", handled(compose)),
        Route("/mail/send", handled(send), methods=["POST"]),
        Route("/mail/{id:int}", handled(message)),
        Route("/mail/{id:int}/archive", handled(archive), methods=["POST"]),
        *life_routes(store, _page, handled),
    ]
    app = Starlette(routes=routes)
    app.state.store = store
    return app


def serve_web(day_dir: str | Path, host: str = "127.0.0.1", port: int = 0) -> BackgroundServer:
    """Start the web app on a background thread; ``.url`` is its address, ``.stop()`` ends it."""
    server = BackgroundServer(create_web_app(day_dir), host, port, name="world-web")
    server.start()
    return server

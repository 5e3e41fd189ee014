"""Shop service (e-commerce back office): products, customers, orders, order status and returns."""

from __future__ import annotations

import random
from typing import Annotated

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.services import vocab
from envpipeline.services.base import (
    Record,
    Service,
    ToolArgs,
    bad_request,
    conflict,
    dump,
    next_id,
    not_found,
    tool,
)
from envpipeline.services.links import (
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    Link,
    PlannedCall,
    expect_record,
    query_hop,
)
from envpipeline.services.registry import register_service

PRODUCTS = (
    "Trail Backpack",
    "Ceramic Mug",
    "Desk Lamp",
    "Wool Scarf",
    "Water Bottle",
    "Notebook Set",
    "Bluetooth Speaker",
    "Yoga Mat",
    "Chef Knife",
    "Rain Jacket",
    "Plant Pot",
    "Phone Stand",
)
ORDER_STATUSES = ("pending", "shipped", "delivered", "cancelled")


class Product(Record):
    id: str
    name: str
    sku: str
    price: float
    stock: int


class Customer(Record):
    id: str
    name: str
    email: str
    city: str = ""


class Order(Record):
    id: str
    number: str
    customerId: str
    productId: str
    quantity: int
    total: float
    status: str = "pending"
    shipCity: str = ""
    placed: str = ""
    deliveryDate: str = ""


class Return(Record):
    id: str
    orderId: str
    reason: str
    status: str = "requested"


class ShopState(Strict):
    products: dict[str, Product] = {}
    customers: dict[str, Customer] = {}
    orders: dict[str, Order] = {}
    returns: dict[str, Return] = {}


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in product name and sku")]


class ProductIdArgs(ToolArgs):
    productId: Annotated[str, Field(description="product id")]


class ListCustomersArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in customer name and email")] = None


class CustomerIdArgs(ToolArgs):
    customerId: Annotated[str, Field(description="customer id")]


class ListOrdersArgs(ToolArgs):
    customerId: Annotated[str | None, Field(description="only orders of this customer")] = None
    status: Annotated[str | None, Field(description="only orders with this status")] = None


class OrderIdArgs(ToolArgs):
    orderId: Annotated[str, Field(description="order id")]


class FindOrderArgs(ToolArgs):
    orderNumber: Annotated[str, Field(description="order number as shown to the customer, e.g. ORD-1234")]


class CreateCustomerArgs(ToolArgs):
    name: Annotated[str, Field(description="customer full name")]
    email: Annotated[str, Field(description="customer email address (unique)")]
    city: Annotated[str, Field(description="customer city")] = ""


class UpdateCustomerArgs(ToolArgs):
    customerId: Annotated[str, Field(description="customer id")]
    name: Annotated[str | None, Field(description="new name")] = None
    email: Annotated[str | None, Field(description="new email address")] = None
    city: Annotated[str | None, Field(description="new city")] = None


class PlaceOrderArgs(ToolArgs):
    customerId: Annotated[str, Field(description="customer id")]
    productId: Annotated[str, Field(description="product id")]
    quantity: Annotated[int, Field(description="number of units, at least 1")]
    shipCity: Annotated[str | None, Field(description="ship-to city (default: the customer's city)")] = None


class OrderStatusArgs(ToolArgs):
    orderId: Annotated[str, Field(description="order id")]
    status: Annotated[str, Field(description="pending, shipped or delivered")]


class ReturnArgs(ToolArgs):
    orderId: Annotated[str, Field(description="id of a delivered order")]
    reason: Annotated[str, Field(description="why the items are returned")]


class ListReturnsArgs(ToolArgs):
    orderId: Annotated[str | None, Field(description="only returns of this order")] = None


class ShopService(Service[ShopState]):
    name = "shop"
    title = "Shop Admin"
    domain = "commerce"

    @classmethod
    def generate_state(cls, rng: random.Random) -> ShopState:
        products: dict[str, Product] = {}
        for name in rng.sample(PRODUCTS, rng.randint(4, 8)):
            pid = next_id("prd", products)
            sku = f"SKU-{rng.randint(1000, 9999)}"
            products[pid] = Product(
                id=pid, name=name, sku=sku, price=float(rng.randint(8, 120)), stock=rng.randint(3, 40)
            )
        customers: dict[str, Customer] = {}
        for _ in range(rng.randint(4, 7)):
            cid = next_id("cus", customers)
            who = vocab.person_name(rng)
            customers[cid] = Customer(
                id=cid, name=who, email=vocab.email_for(who, rng), city=vocab.city(rng)[0]
            )
        orders: dict[str, Order] = {}
        numbers: set[str] = set()
        for i in range(rng.randint(4, 8)):
            oid = next_id("ord", orders)
            customer = rng.choice(list(customers.values()))
            product = rng.choice(list(products.values()))
            qty = rng.randint(1, 3)
            orders[oid] = Order(
                id=oid,
                number=vocab.unique(rng, vocab.code, numbers, "ORD"),
                customerId=customer.id,
                productId=product.id,
                quantity=qty,
                total=product.price * qty,
                status=ORDER_STATUSES[i % 3],
                shipCity=customer.city,
                placed=vocab.date(rng),
                deliveryDate=vocab.date(rng),
            )
        return ShopState(products=products, customers=customers, orders=orders)

    def _get(self, collection: str, kind: str, key: str):
        record = getattr(self.state, collection).get(key)
        if record is None:
            raise not_found(kind, key)
        return record

    @tool(writes=False)
    def search_products(self, args: QueryArgs) -> dict:
        """Search products by text in their name or SKU."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [p for p in self.state.products.values() if q in f"{p.name} {p.sku}".lower()]
        return {"products": [dump(p) for p in hits]}

    @tool(writes=False)
    def get_product(self, args: ProductIdArgs) -> dict:
        """Get one product by id, with its price and stock."""
        return {"product": dump(self._get("products", "product", args.productId))}

    @tool(writes=False)
    def list_customers(self, args: ListCustomersArgs) -> dict:
        """List customers, optionally filtered by text in their name or email."""
        q = (args.query or "").lower().strip()
        hits = [c for c in self.state.customers.values() if q in f"{c.name} {c.email}".lower()]
        return {"customers": [dump(c) for c in hits]}

    @tool(writes=False)
    def get_customer(self, args: CustomerIdArgs) -> dict:
        """Get one customer by id."""
        return {"customer": dump(self._get("customers", "customer", args.customerId))}

    @tool(writes=False)
    def list_orders(self, args: ListOrdersArgs) -> dict:
        """List orders, optionally of one customer and/or with one status."""
        if args.customerId is not None:
            self._get("customers", "customer", args.customerId)
        if args.status is not None and args.status not in ORDER_STATUSES:
            raise bad_request(f"status must be one of: {', '.join(ORDER_STATUSES)}")
        hits = [
            o
            for o in self.state.orders.values()
            if (args.customerId is None or o.customerId == args.customerId)
            and (args.status is None or o.status == args.status)
        ]
        return {"orders": [dump(o) for o in hits]}

    @tool(writes=False)
    def get_order(self, args: OrderIdArgs) -> dict:
        """Get one order by id."""
        return {"order": dump(self._get("orders", "order", args.orderId))}

    @tool(writes=False)
    def find_order(self, args: FindOrderArgs) -> dict:
        """Find an order by the order number the customer quotes (e.g. ORD-1234)."""
        for order in self.state.orders.values():
            if order.number.lower() == args.orderNumber.strip().lower():
                return {"order": dump(order)}
        raise not_found("order number", args.orderNumber)

    @tool(writes=True)
    def create_customer(self, args: CreateCustomerArgs) -> dict:
        """Create a customer; the email must not be used by another customer."""
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        if any(c.email.lower() == args.email.lower() for c in self.state.customers.values()):
            raise conflict(f"a customer with email {args.email} already exists")
        cid = next_id("cus", self.state.customers)
        customer = Customer(id=cid, **args.model_dump())
        self.state.customers[cid] = customer
        return {"customer": dump(customer)}

    @tool(writes=True)
    def update_customer(self, args: UpdateCustomerArgs) -> dict:
        """Update a customer's name, email or city."""
        customer = self._get("customers", "customer", args.customerId)
        changes = {f: getattr(args, f) for f in ("name", "email", "city") if getattr(args, f) is not None}
        if not changes:
            raise bad_request("nothing to update; updatable fields: name, email, city")
        if "email" in changes:
            if "@" not in changes["email"]:
                raise bad_request(f"invalid email '{changes['email']}'")
            if any(
                c.email.lower() == changes["email"].lower() and c.id != customer.id
                for c in self.state.customers.values()
            ):
                raise conflict(f"email {changes['email']} is used by another customer")
        for name, value in changes.items():
            setattr(customer, name, value)
        return {"customer": dump(customer), "updated": sorted(changes)}

    @tool(writes=True)
    def place_order(self, args: PlaceOrderArgs) -> dict:
        """Place an order for one product; fails with 409 when stock is insufficient."""
        customer = self._get("customers", "customer", args.customerId)
        product = self._get("products", "product", args.productId)
        if args.quantity < 1:
            raise bad_request("quantity must be at least 1")
        if product.stock < args.quantity:
            raise conflict(f"only {product.stock} units of {product.name} in stock")
        product.stock -= args.quantity
        oid = next_id("ord", self.state.orders)
        order = Order(
            id=oid,
            number=f"ORD-{7000 + len(self.state.orders) + 1}",
            customerId=customer.id,
            productId=product.id,
            quantity=args.quantity,
            total=round(product.price * args.quantity, 2),
            shipCity=args.shipCity or customer.city,
            placed="2026-06-15",
        )
        self.state.orders[oid] = order
        return {"order": dump(order)}

    @tool(writes=True)
    def update_order_status(self, args: OrderStatusArgs) -> dict:
        """Advance an order's status to pending, shipped or delivered (use cancel_order to cancel)."""
        if args.status not in ORDER_STATUSES[:3]:
            raise bad_request("status must be pending, shipped or delivered")
        order = self._get("orders", "order", args.orderId)
        if order.status == "cancelled":
            raise conflict(f"order {order.number} is cancelled")
        if order.status == args.status:
            raise conflict(f"order {order.number} is already {args.status}")
        order.status = args.status
        return {"order": dump(order)}

    @tool(writes=True)
    def cancel_order(self, args: OrderIdArgs) -> dict:
        """Cancel an order that has not shipped yet; its units go back to stock."""
        order = self._get("orders", "order", args.orderId)
        if order.status != "pending":
            raise conflict(f"order {order.number} is {order.status} and cannot be cancelled")
        order.status = "cancelled"
        product = self.state.products.get(order.productId)
        if product is not None:
            product.stock += order.quantity
        return {"order": dump(order)}

    @tool(writes=True)
    def request_return(self, args: ReturnArgs) -> dict:
        """Open a return for a delivered order (one return per order)."""
        order = self._get("orders", "order", args.orderId)
        if not args.reason.strip():
            raise bad_request("reason must not be empty")
        if order.status != "delivered":
            raise conflict(f"order {order.number} is {order.status}; only delivered orders can be returned")
        if any(r.orderId == order.id for r in self.state.returns.values()):
            raise conflict(f"order {order.number} already has a return")
        rid = next_id("ret", self.state.returns)
        ret = Return(id=rid, orderId=order.id, reason=args.reason)
        self.state.returns[rid] = ret
        return {"return": dump(ret)}

    @tool(writes=False)
    def list_returns(self, args: ListReturnsArgs) -> dict:
        """List return requests, optionally of one order."""
        if args.orderId is not None:
            self._get("orders", "order", args.orderId)
        hits = [r for r in self.state.returns.values() if args.orderId is None or r.orderId == args.orderId]
        return {"returns": [dump(r) for r in hits]}

    @classmethod
    def example_arguments(cls, state: ShopState) -> dict[str, dict]:
        product = next(iter(state.products.values()))
        customer = next(iter(state.customers.values()))
        orders = list(state.orders.values())
        pending, shipped, delivered = orders[0], orders[1], orders[2]
        return {
            "search_products": {"query": product.name.split()[0]},
            "get_product": {"productId": product.id},
            "list_customers": {"query": customer.name.split()[0]},
            "get_customer": {"customerId": customer.id},
            "list_orders": {"customerId": pending.customerId},
            "get_order": {"orderId": pending.id},
            "find_order": {"orderNumber": pending.number},
            "create_customer": {"name": "Rui Costa", "email": "rui.costa@example.org", "city": "Porto"},
            "update_customer": {
                "customerId": customer.id,
                "city": "Ghent" if customer.city != "Ghent" else "Cork",
            },
            "place_order": {"customerId": customer.id, "productId": product.id, "quantity": 1},
            "update_order_status": {"orderId": shipped.id, "status": "delivered"},
            "cancel_order": {"orderId": pending.id},
            "request_return": {"orderId": delivered.id, "reason": "wrong size"},
            "list_returns": {"orderId": delivered.id},
        }

    @classmethod
    def links(cls) -> list[Link[ShopState]]:
        return [
            Hop(
                "customer_name",
                "email",
                "person",
                _plant_customer_name,
                relation="the full name of the shop customer whose email is {of}",
            ),
            Hop(
                "customer_order",
                "person",
                "order_number",
                _plant_customer_order,
                relation="the order number of the shop order placed by {of}",
            ),
            Hop(
                "order_ship_city",
                "order_number",
                "city",
                _plant_order_city,
                relation="the shipping city of shop order {of}",
            ),
            Hop("product_sku", "title", "sku", _plant_product_sku, relation="the SKU of the product {of}"),
            Action("cancel_order", "order_number", _plant_cancel_order),
            Action("update_customer_email", "email", _plant_update_email),
            Action("register_customer_in_city", "city", _plant_register_customer),
            Action("place_order_for_person", "person", _plant_place_order),
            Action("cancel_pending_order_of_person", "person", _plant_cancel_pending),
            Action("mark_order_delivered", "email", _plant_mark_delivered),
            Action("return_delivered_order", "email", _plant_request_return),
        ]


def _drop_orphans(state: ShopState) -> None:
    """Remove orders of removed customers and returns of removed orders (ids are reused by `next_id`)."""
    for oid in [o.id for o in state.orders.values() if o.customerId not in state.customers]:
        del state.orders[oid]
    for rid in [r.id for r in state.returns.values() if r.orderId not in state.orders]:
        del state.returns[rid]


def _drop_customers(state: ShopState, text: str) -> None:
    low = text.lower()
    for cid in [c.id for c in state.customers.values() if low in f"{c.name} {c.email}".lower()]:
        del state.customers[cid]
    _drop_orphans(state)


def _new_customer(state: ShopState, rng: random.Random, name: str, email: str) -> Customer:
    cid = next_id("cus", state.customers)
    customer = Customer(id=cid, name=name, email=email, city=vocab.city(rng)[0])
    state.customers[cid] = customer
    return customer


def _new_order(state: ShopState, rng: random.Random, number: str, customer_id: str, **fields) -> Order:
    for oid in [o.id for o in state.orders.values() if o.number.lower() == number.lower()]:
        del state.orders[oid]
    _drop_orphans(state)
    product = next(iter(state.products.values()))
    oid = next_id("ord", state.orders)
    fields.setdefault("shipCity", vocab.city(rng)[0])
    order = Order(
        id=oid,
        number=number,
        customerId=customer_id,
        productId=product.id,
        quantity=1,
        total=product.price,
        placed=vocab.date(rng),
        deliveryDate=vocab.date(rng),
        **fields,
    )
    state.orders[oid] = order
    return order


def _plant_customer_name(state: ShopState, rng: random.Random, value: str) -> HopPlan:
    _drop_customers(state, value)
    who = vocab.person_name(rng)
    _drop_customers(state, who)
    _new_customer(state, rng, who, value)
    return query_hop(
        "list_customers",
        value,
        ("customers", 0, "name"),
        who,
        "look up the shop customer with that email address and note their full name",
    )


def _plant_customer_order(state: ShopState, rng: random.Random, value: str) -> HopPlan:
    _drop_customers(state, value)
    customer = _new_customer(state, rng, value, vocab.email_for(value, rng))
    number = vocab.unique(rng, vocab.code, {o.number for o in state.orders.values()}, "ORD")
    _new_order(state, rng, number, customer.id)
    calls = [
        PlannedCall("list_customers", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_orders",
            {"customerId": None},
            bind={"customerId": (0, ("customers", 0, "id"))},
            reveals=("orders", 0, "number"),
        ),
    ]
    return HopPlan(calls, number, "find that person's order in the shop admin and note its order number")


def _plant_order_city(state: ShopState, rng: random.Random, value: str) -> HopPlan:
    customer = next(iter(state.customers.values()))
    place = vocab.city(rng)[0]
    _new_order(state, rng, value, customer.id, shipCity=place)
    call = PlannedCall(
        "find_order", {"orderNumber": value}, inputs={"orderNumber": "{value}"}, reveals=("order", "shipCity")
    )
    return HopPlan([call], place, "find the shop order with that order number and note the city it ships to")


def _plant_product_sku(state: ShopState, rng: random.Random, value: str) -> HopPlan:
    low = value.lower()
    for pid in [p.id for p in state.products.values() if low in f"{p.name} {p.sku}".lower()]:
        del state.products[pid]
    sku = vocab.unique(rng, vocab.code, {p.sku for p in state.products.values()}, "SKU")
    pid = next_id("prd", state.products)
    state.products[pid] = Product(
        id=pid, name=value, sku=sku, price=float(rng.randint(8, 120)), stock=rng.randint(3, 40)
    )
    return query_hop(
        "search_products",
        value,
        ("products", 0, "sku"),
        sku,
        "find the shop product with that title and note its SKU code",
    )


def _plant_cancel_order(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    customer = next(iter(state.customers.values()))
    _new_order(state, rng, value, customer.id, status="pending")
    calls = [
        PlannedCall("find_order", {"orderNumber": value}, inputs={"orderNumber": "{value}"}),
        PlannedCall("cancel_order", {"orderId": None}, bind={"orderId": (0, ("order", "id"))}),
    ]
    crit = expect_record("orders", f"shop order {value} is cancelled", number=value, status="cancelled")
    return ActionPlan(calls, [crit], "cancel the shop order with that order number")


def _plant_update_email(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    _drop_customers(state, value)
    who = vocab.person_name(rng)
    _drop_customers(state, who)
    _new_customer(state, rng, who, vocab.email_for(who, rng))
    calls = [
        PlannedCall("list_customers", {"query": who}),
        PlannedCall(
            "update_customer",
            {"customerId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"customerId": (0, ("customers", 0, "id"))},
        ),
    ]
    crit = expect_record("customers", f"shop customer '{who}' has email {value}", name=who, email=value)
    return ActionPlan(calls, [crit], f"change the email of the shop customer '{who}' to that email address")


def _unused_person(state: ShopState, rng: random.Random) -> str:
    """A name that no customer's name or email mentions (nothing is removed to make it so)."""
    for _ in range(200):
        name = vocab.person_name(rng)
        low = name.lower()
        if not any(low in f"{c.name} {c.email}".lower() for c in state.customers.values()):
            return name
    raise ValueError("no unused customer name")


def _unused_email(state: ShopState, rng: random.Random, name: str) -> str:
    """An email address for `name` that no customer has yet (another customer may own the obvious one)."""
    taken = {c.email.lower() for c in state.customers.values()}
    for n in range(200):
        email = vocab.email_for(name, rng)
        if n >= 20:
            local, _, domain = email.partition("@")
            email = f"{local}{n}@{domain}"
        if email.lower() not in taken:
            return email
    raise ValueError("no unused email address")


def _fresh_customer(state: ShopState, rng: random.Random, name: str = "", email: str = "") -> Customer:
    """A customer with the carried `name` or `email` (any other holding it is removed); the rest is new."""
    if name:
        _drop_customers(state, name)
    if email:
        _drop_customers(state, email)
    name = name or _unused_person(state, rng)
    return _new_customer(state, rng, name, email or _unused_email(state, rng, name))


def _customer_orders(query: str, carried: bool) -> list[PlannedCall]:
    """Find a customer by name or email, then list their orders."""
    return [
        PlannedCall("list_customers", {"query": query}, inputs={"query": "{value}"} if carried else {}),
        PlannedCall("list_orders", {"customerId": None}, bind={"customerId": (0, ("customers", 0, "id"))}),
    ]


def _order_of(state: ShopState, rng: random.Random, customer: Customer, status: str) -> Order:
    number = vocab.unique(rng, vocab.code, {o.number for o in state.orders.values()}, "ORD")
    return _new_order(state, rng, number, customer.id, status=status, shipCity=customer.city)


def _plant_register_customer(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    who = _unused_person(state, rng)
    email = _unused_email(state, rng, who)
    call = PlannedCall(
        "create_customer", {"name": who, "email": email, "city": value}, inputs={"city": "{value}"}
    )
    crit = expect_record(
        "customers", f"a customer '{who}' ({email}) in {value} exists", name=who, email=email, city=value
    )
    return ActionPlan(
        [call], [crit], f"register '{who}' ({email}) as a new shop customer living in that city"
    )


def _plant_place_order(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    customer = _fresh_customer(state, rng, name=value)
    product = rng.choice(list(state.products.values()))
    low = product.name.lower()
    for pid in [
        p.id for p in state.products.values() if p.id != product.id and low in f"{p.name} {p.sku}".lower()
    ]:
        del state.products[pid]
    product.stock = max(product.stock, 5)
    calls = [
        PlannedCall("list_customers", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("search_products", {"query": product.name}),
        PlannedCall(
            "place_order",
            {"customerId": None, "productId": None, "quantity": 2},
            bind={"customerId": (0, ("customers", 0, "id")), "productId": (1, ("products", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "orders",
        f"{value} has an order of 2 x {product.name}",
        customerId=customer.id,
        productId=product.id,
        quantity=2,
        status="pending",
    )
    return ActionPlan(calls, [crit], f"place an order of 2 units of '{product.name}' for that person")


def _plant_cancel_pending(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    customer = _fresh_customer(state, rng, name=value)
    order = _order_of(state, rng, customer, "pending")
    calls = [
        *_customer_orders(value, carried=True),
        PlannedCall("cancel_order", {"orderId": None}, bind={"orderId": (1, ("orders", 0, "id"))}),
    ]
    crit = expect_record(
        "orders", f"the order {order.number} of {value} is cancelled", number=order.number, status="cancelled"
    )
    return ActionPlan(calls, [crit], "cancel that person's pending shop order")


def _plant_mark_delivered(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    customer = _fresh_customer(state, rng, email=value)
    order = _order_of(state, rng, customer, "shipped")
    calls = [
        *_customer_orders(value, carried=True),
        PlannedCall(
            "update_order_status",
            {"orderId": None, "status": "delivered"},
            bind={"orderId": (1, ("orders", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "orders", f"the order {order.number} is delivered", number=order.number, status="delivered"
    )
    return ActionPlan(
        calls, [crit], "mark the shipped order of the customer with that email address as delivered"
    )


def _plant_request_return(state: ShopState, rng: random.Random, value: str) -> ActionPlan:
    customer = _fresh_customer(state, rng, email=value)
    order = _order_of(state, rng, customer, "delivered")
    reason = rng.choice(("arrived damaged", "wrong size", "not as described"))
    order_id = {"orderId": (1, ("orders", 0, "id"))}
    calls = [
        *_customer_orders(value, carried=True),
        PlannedCall("list_returns", {"orderId": None}, bind=order_id),
        PlannedCall("request_return", {"orderId": None, "reason": reason}, bind=order_id),
    ]
    crit = expect_record(
        "returns",
        f"a return of {order.number} is requested",
        orderId=order.id,
        reason=reason,
        status="requested",
    )
    phrase = (
        "open a return for the delivered order of the customer with that email address, "
        f"with the reason '{reason}', after checking that it has no return yet"
    )
    return ActionPlan(calls, [crit], phrase)


register_service(ShopService)

"""Banking service: accounts with balances, transactions, payees, transfers and payments."""

from __future__ import annotations

import random
from typing import Annotated

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.task import Condition
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

ACCOUNT_KINDS = ("Everyday Checking", "Travel Savings", "Household Checking", "Rainy Day Savings")
CATEGORIES = ("groceries", "travel", "utilities", "dining", "rent", "salary", "transfer", "other")
STATUSES = ("active", "frozen")


class Account(Record):
    id: str
    name: str
    number: str
    owner: str
    balance: float
    currency: str = "USD"
    status: str = "active"


class Payee(Record):
    id: str
    name: str
    email: str
    bankCity: str = ""
    accountNumber: str = ""


class Transaction(Record):
    id: str
    accountId: str
    date: str
    amount: float
    counterparty: str
    description: str = ""
    reference: str = ""
    category: str = "other"


class BankingState(Strict):
    accounts: dict[str, Account] = {}
    payees: dict[str, Payee] = {}
    transactions: dict[str, Transaction] = {}


class NoArgs(ToolArgs):
    pass


class AccountIdArgs(ToolArgs):
    accountId: Annotated[str, Field(description="account id")]


class ListTransactionsArgs(ToolArgs):
    accountId: Annotated[str | None, Field(description="only transactions of this account")] = None
    date: Annotated[str | None, Field(description="only transactions on this day (YYYY-MM-DD)")] = None
    maxResults: Annotated[int, Field(description="maximum transactions to return", ge=1, le=100)] = 20


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in counterparty, description and reference")]


class TransactionIdArgs(ToolArgs):
    transactionId: Annotated[str, Field(description="transaction id")]


class ListPayeesArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in payee name and email")] = None


class AddPayeeArgs(ToolArgs):
    name: Annotated[str, Field(description="payee full name")]
    email: Annotated[str, Field(description="payee email address")]
    bankCity: Annotated[str, Field(description="city of the payee's bank branch")] = ""
    accountNumber: Annotated[str, Field(description="payee account number")] = ""


class UpdatePayeeArgs(ToolArgs):
    payeeId: Annotated[str, Field(description="payee id")]
    name: Annotated[str | None, Field(description="new name")] = None
    email: Annotated[str | None, Field(description="new email address")] = None
    bankCity: Annotated[str | None, Field(description="new bank branch city")] = None


class PayeeIdArgs(ToolArgs):
    payeeId: Annotated[str, Field(description="payee id")]


class TransferArgs(ToolArgs):
    fromAccountId: Annotated[str, Field(description="account the money leaves")]
    toAccountId: Annotated[str, Field(description="account the money goes to")]
    amount: Annotated[float, Field(description="amount to move, positive")]
    memo: Annotated[str, Field(description="free-text memo")] = ""


class PayPayeeArgs(ToolArgs):
    accountId: Annotated[str, Field(description="account to pay from")]
    payeeId: Annotated[str, Field(description="payee id")]
    amount: Annotated[float, Field(description="amount to pay, positive")]
    memo: Annotated[str, Field(description="free-text memo")] = ""


class AccountStatusArgs(ToolArgs):
    accountId: Annotated[str, Field(description="account id")]
    status: Annotated[str, Field(description="active or frozen")]


class CategorizeArgs(ToolArgs):
    transactionId: Annotated[str, Field(description="transaction id")]
    category: Annotated[str, Field(description=f"one of: {', '.join(CATEGORIES)}")]


TODAY = "2026-06-15"


class BankingService(Service[BankingState]):
    name = "banking"
    title = "Online Banking"
    domain = "finance"

    @classmethod
    def generate_state(cls, rng: random.Random) -> BankingState:
        owner = vocab.person_name(rng)
        accounts: dict[str, Account] = {}
        for kind in rng.sample(ACCOUNT_KINDS, rng.randint(2, 4)):
            aid = next_id("acc", accounts)
            number = str(rng.randint(1000, 9999))
            accounts[aid] = Account(
                id=aid, name=kind, number=number, owner=owner, balance=float(rng.randint(800, 9000))
            )
        payees: dict[str, Payee] = {}
        for _ in range(rng.randint(4, 7)):
            pid = next_id("pay", payees)
            who = vocab.person_name(rng)
            payees[pid] = Payee(
                id=pid,
                name=who,
                email=vocab.email_for(who, rng),
                bankCity=vocab.city(rng)[0],
                accountNumber=str(rng.randint(10_000_000, 99_999_999)),
            )
        transactions: dict[str, Transaction] = {}
        ids = list(accounts)
        for _ in range(rng.randint(5, 10)):
            tid = next_id("txn", transactions)
            transactions[tid] = Transaction(
                id=tid,
                accountId=rng.choice(ids),
                date=vocab.date(rng),
                amount=-float(rng.randint(5, 400)),
                counterparty=vocab.person_name(rng),
                description=vocab.sentence(rng),
                reference=vocab.code(rng, "TXN"),
                category=rng.choice(CATEGORIES),
            )
        return BankingState(accounts=accounts, payees=payees, transactions=transactions)

    def _account(self, account_id: str) -> Account:
        account = self.state.accounts.get(account_id)
        if account is None:
            raise not_found("account", account_id)
        return account

    def _payee(self, payee_id: str) -> Payee:
        payee = self.state.payees.get(payee_id)
        if payee is None:
            raise not_found("payee", payee_id)
        return payee

    def _transaction(self, transaction_id: str) -> Transaction:
        txn = self.state.transactions.get(transaction_id)
        if txn is None:
            raise not_found("transaction", transaction_id)
        return txn

    def _record(
        self, account: Account, amount: float, counterparty: str, memo: str, category: str
    ) -> Transaction:
        tid = next_id("txn", self.state.transactions)
        reference = f"TXN-{5000 + len(self.state.transactions) + 1}"
        txn = Transaction(
            id=tid,
            accountId=account.id,
            date=TODAY,
            amount=amount,
            counterparty=counterparty,
            description=memo,
            reference=reference,
            category=category,
        )
        self.state.transactions[tid] = txn
        account.balance = round(account.balance + amount, 2)
        return txn

    @staticmethod
    def _check_debit(account: Account, amount: float) -> None:
        if amount <= 0:
            raise bad_request("amount must be positive")
        if account.status != "active":
            raise conflict(f"account {account.id} is {account.status}")
        if account.balance < amount:
            raise conflict(
                f"insufficient funds in {account.id}: balance {account.balance:.2f}, need {amount:.2f}"
            )

    @tool(writes=False)
    def list_accounts(self, args: NoArgs) -> dict:
        """List all bank accounts with their balances."""
        return {"accounts": [dump(a) for a in self.state.accounts.values()]}

    @tool(writes=False)
    def get_account(self, args: AccountIdArgs) -> dict:
        """Get one account by id."""
        return {"account": dump(self._account(args.accountId))}

    @tool(writes=False)
    def list_transactions(self, args: ListTransactionsArgs) -> dict:
        """List transactions, optionally of one account and/or on one day."""
        if args.accountId is not None:
            self._account(args.accountId)
        found = [
            t
            for t in self.state.transactions.values()
            if (args.accountId is None or t.accountId == args.accountId)
            and (not args.date or t.date == args.date)
        ]
        return {"transactions": [dump(t) for t in found[: args.maxResults]]}

    @tool(writes=False)
    def search_transactions(self, args: QueryArgs) -> dict:
        """Search transactions by text in their counterparty, description or reference code."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [
            t
            for t in self.state.transactions.values()
            if q in f"{t.counterparty} {t.description} {t.reference}".lower()
        ]
        return {"transactions": [dump(t) for t in hits]}

    @tool(writes=False)
    def get_transaction(self, args: TransactionIdArgs) -> dict:
        """Get one transaction by id."""
        return {"transaction": dump(self._transaction(args.transactionId))}

    @tool(writes=False)
    def list_payees(self, args: ListPayeesArgs) -> dict:
        """List saved payees, optionally filtered by text in their name or email."""
        q = (args.query or "").lower().strip()
        hits = [p for p in self.state.payees.values() if q in f"{p.name} {p.email}".lower()]
        return {"payees": [dump(p) for p in hits]}

    @tool(writes=True)
    def add_payee(self, args: AddPayeeArgs) -> dict:
        """Save a new payee; the email must be unique among payees."""
        if not args.name.strip():
            raise bad_request("name must not be empty")
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        if any(p.email.lower() == args.email.lower() for p in self.state.payees.values()):
            raise conflict(f"a payee with email {args.email} already exists")
        pid = next_id("pay", self.state.payees)
        payee = Payee(id=pid, **args.model_dump())
        self.state.payees[pid] = payee
        return {"payee": dump(payee)}

    @tool(writes=True)
    def update_payee(self, args: UpdatePayeeArgs) -> dict:
        """Update a payee's name, email or bank branch city."""
        payee = self._payee(args.payeeId)
        changes = {f: getattr(args, f) for f in ("name", "email", "bankCity") if getattr(args, f) is not None}
        if not changes:
            raise bad_request("nothing to update; updatable fields: name, email, bankCity")
        if "email" in changes and "@" not in changes["email"]:
            raise bad_request(f"invalid email '{changes['email']}'")
        for name, value in changes.items():
            setattr(payee, name, value)
        return {"payee": dump(payee), "updated": sorted(changes)}

    @tool(writes=True)
    def delete_payee(self, args: PayeeIdArgs) -> dict:
        """Remove a saved payee."""
        self._payee(args.payeeId)
        del self.state.payees[args.payeeId]
        return {"deleted": args.payeeId}

    @tool(writes=True)
    def transfer(self, args: TransferArgs) -> dict:
        """Move money between two of the user's accounts; fails with 409 on insufficient funds."""
        source = self._account(args.fromAccountId)
        target = self._account(args.toAccountId)
        if source.id == target.id:
            raise bad_request("source and target accounts must differ")
        self._check_debit(source, args.amount)
        if target.status != "active":
            raise conflict(f"account {target.id} is {target.status}")
        out = self._record(source, -args.amount, target.name, args.memo, "transfer")
        into = self._record(target, args.amount, source.name, args.memo, "transfer")
        return {"debit": dump(out), "credit": dump(into)}

    @tool(writes=True)
    def pay_payee(self, args: PayPayeeArgs) -> dict:
        """Pay a saved payee from an account; fails with 409 on insufficient funds."""
        account = self._account(args.accountId)
        payee = self._payee(args.payeeId)
        self._check_debit(account, args.amount)
        txn = self._record(account, -args.amount, payee.name, args.memo, "other")
        return {"transaction": dump(txn), "balance": account.balance}

    @tool(writes=True)
    def set_account_status(self, args: AccountStatusArgs) -> dict:
        """Freeze or reactivate an account (status active or frozen)."""
        if args.status not in STATUSES:
            raise bad_request("status must be active or frozen")
        account = self._account(args.accountId)
        if account.status == args.status:
            raise conflict(f"account {account.id} is already {args.status}")
        account.status = args.status
        return {"account": dump(account)}

    @tool(writes=True)
    def categorize_transaction(self, args: CategorizeArgs) -> dict:
        """Set the spending category of a transaction."""
        if args.category not in CATEGORIES:
            raise bad_request(f"category must be one of: {', '.join(CATEGORIES)}")
        txn = self._transaction(args.transactionId)
        txn.category = args.category
        return {"transaction": dump(txn)}

    @classmethod
    def example_arguments(cls, state: BankingState) -> dict[str, dict]:
        first, second = list(state.accounts.values())[:2]
        payee = next(iter(state.payees.values()))
        txn = next(iter(state.transactions.values()))
        other = next(c for c in CATEGORIES if c != txn.category)
        return {
            "list_accounts": {},
            "get_account": {"accountId": first.id},
            "list_transactions": {"accountId": txn.accountId},
            "search_transactions": {"query": txn.reference},
            "get_transaction": {"transactionId": txn.id},
            "list_payees": {"query": payee.name.split()[0]},
            "add_payee": {"name": "Rui Costa", "email": "rui.costa@example.org", "bankCity": "Porto"},
            "update_payee": {
                "payeeId": payee.id,
                "bankCity": "Ghent" if payee.bankCity != "Ghent" else "Cork",
            },
            "delete_payee": {"payeeId": payee.id},
            "transfer": {"fromAccountId": first.id, "toAccountId": second.id, "amount": 50.0},
            "pay_payee": {"accountId": first.id, "payeeId": payee.id, "amount": 25.5, "memo": "dinner"},
            "set_account_status": {"accountId": first.id, "status": "frozen"},
            "categorize_transaction": {"transactionId": txn.id, "category": other},
        }

    @classmethod
    def links(cls) -> list[Link[BankingState]]:
        return [
            Hop(
                "payee_email",
                "person",
                "email",
                _plant_payee_email,
                relation="the email address saved for the payee {of}",
            ),
            Hop(
                "payee_bank_city",
                "email",
                "city",
                _plant_payee_city,
                relation="the city of the bank branch of the payee whose email is {of}",
            ),
            Hop(
                "transaction_date",
                "code",
                "date",
                _plant_transaction_date,
                relation="the date of the bank transaction with reference {of}",
            ),
            Hop(
                "transaction_account_holder",
                "code",
                "person",
                _plant_account_holder,
                relation="the holder of the bank account charged with the transaction with reference {of}",
            ),
            Action("pay_person", "person", _plant_pay_person),
            Action("add_payee_email", "email", _plant_add_payee),
            Action("remove_payee_email", "email", _plant_remove_payee),
            Action("move_payee_bank_city", "city", _plant_payee_move),
            Action("categorize_day_transaction", "date", _plant_categorize),
            Action("freeze_charged_account", "code", _plant_freeze),
            Action("transfer_with_reference", "code", _plant_transfer),
        ]


def _drop_payees(state: BankingState, text: str) -> None:
    low = text.lower()
    for pid in [p.id for p in state.payees.values() if low in f"{p.name} {p.email}".lower()]:
        del state.payees[pid]


def _unique_email(state: BankingState, rng: random.Random, name: str) -> str:
    """An email for `name` no payee has yet (`add_payee` keeps payee emails unique)."""
    taken = {p.email.lower() for p in state.payees.values()}
    return vocab.unique(rng, lambda r: vocab.email_for(name, r), taken)


def _new_payee(state: BankingState, rng: random.Random, **fields) -> Payee:
    pid = next_id("pay", state.payees)
    fields.setdefault("bankCity", vocab.city(rng)[0])
    payee = Payee(id=pid, accountNumber=str(rng.randint(10_000_000, 99_999_999)), **fields)
    state.payees[pid] = payee
    return payee


def _plant_payee_email(state: BankingState, rng: random.Random, value: str) -> HopPlan:
    _drop_payees(state, value)
    email = vocab.email_for(vocab.person_name(rng), rng)
    _drop_payees(state, email)
    _new_payee(state, rng, name=value, email=email)
    return query_hop(
        "list_payees",
        value,
        ("payees", 0, "email"),
        email,
        "find that person among the saved payees in online banking and note their email",
    )


def _plant_payee_city(state: BankingState, rng: random.Random, value: str) -> HopPlan:
    _drop_payees(state, value)
    place = vocab.city(rng)[0]
    _new_payee(state, rng, name=vocab.person_name(rng), email=value, bankCity=place)
    return query_hop(
        "list_payees",
        value,
        ("payees", 0, "bankCity"),
        place,
        "find the banking payee with that email address and note the city of their bank branch",
    )


def _plant_transaction_date(state: BankingState, rng: random.Random, value: str) -> HopPlan:
    low = value.lower()
    for tid in [
        t.id
        for t in state.transactions.values()
        if low in f"{t.counterparty} {t.description} {t.reference}".lower()
    ]:
        del state.transactions[tid]
    day = vocab.date(rng)
    tid = next_id("txn", state.transactions)
    state.transactions[tid] = Transaction(
        id=tid,
        accountId=next(iter(state.accounts)),
        date=day,
        amount=-float(rng.randint(20, 300)),
        counterparty=vocab.person_name(rng),
        description=vocab.sentence(rng),
        reference=value,
    )
    call = PlannedCall(
        "search_transactions",
        {"query": value},
        inputs={"query": "{value}"},
        reveals=("transactions", 0, "date"),
    )
    return HopPlan(
        [call], day, "look up the bank transaction with that reference code and note the date it was made"
    )


def _plant_pay_person(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_payees(state, value)
    for tid in [t.id for t in state.transactions.values() if t.counterparty == value]:
        del state.transactions[tid]
    _new_payee(state, rng, name=value, email=_unique_email(state, rng, value))
    taken = {a.number for a in state.accounts.values()}
    number = vocab.unique(rng, lambda r: str(r.randint(1000, 9999)), taken)
    aid = next_id("acc", state.accounts)
    owner = next(iter(state.accounts.values())).owner if state.accounts else vocab.person_name(rng)
    state.accounts[aid] = Account(id=aid, name="Bills Checking", number=number, owner=owner, balance=2500.0)
    amount = float(rng.randint(40, 400))
    calls = [
        PlannedCall("list_payees", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "pay_payee",
            {"accountId": aid, "payeeId": None, "amount": amount},
            bind={"payeeId": (0, ("payees", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "transactions",
        f"{value} is paid {amount:.2f} from account {aid}",
        accountId=aid,
        counterparty=value,
        amount=-amount,
    )
    phrase = f"in online banking, pay that person {amount:.2f} USD from the account ending in {number}"
    return ActionPlan(calls, [crit], phrase)


def _plant_add_payee(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_payees(state, value)
    who = vocab.person_name(rng)
    _drop_payees(state, who)
    call = PlannedCall("add_payee", {"name": who, "email": value}, inputs={"email": "{value}"})
    crit = expect_record("payees", f"a payee '{who}' with email {value} exists", name=who, email=value)
    return ActionPlan([call], [crit], f"in online banking, add a payee named '{who}' with that email address")


def _new_account(state: BankingState, rng: random.Random, name: str, **fields) -> Account:
    taken = {a.number for a in state.accounts.values()}
    number = vocab.unique(rng, lambda r: str(r.randint(1000, 9999)), taken)
    fields.setdefault(
        "owner", next(iter(state.accounts.values())).owner if state.accounts else vocab.person_name(rng)
    )
    fields.setdefault("balance", 2500.0)
    aid = next_id("acc", state.accounts)
    account = Account(id=aid, name=name, number=number, **fields)
    state.accounts[aid] = account
    return account


def _drop_transactions(state: BankingState, text: str) -> None:
    low = text.lower()
    for tid in [
        t.id
        for t in state.transactions.values()
        if low in f"{t.counterparty} {t.description} {t.reference} {t.date}".lower()
    ]:
        del state.transactions[tid]


def _new_transaction(state: BankingState, rng: random.Random, account: str, **fields) -> Transaction:
    fields.setdefault("date", vocab.date(rng))
    fields.setdefault(
        "reference", vocab.unique(rng, vocab.code, {t.reference for t in state.transactions.values()}, "TXN")
    )
    tid = next_id("txn", state.transactions)
    txn = Transaction(
        id=tid,
        accountId=account,
        amount=-float(rng.randint(20, 300)),
        counterparty=vocab.person_name(rng),
        description=vocab.sentence(rng),
        **fields,
    )
    state.transactions[tid] = txn
    return txn


def _plant_account_holder(state: BankingState, rng: random.Random, value: str) -> HopPlan:
    _drop_transactions(state, value)
    taken = {a.owner for a in state.accounts.values()}
    holder = vocab.unique(rng, vocab.person_name, taken)
    account = _new_account(state, rng, "Joint Checking", owner=holder)
    _new_transaction(state, rng, account.id, reference=value)
    calls = [
        PlannedCall("search_transactions", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "get_account",
            {"accountId": None},
            bind={"accountId": (0, ("transactions", 0, "accountId"))},
            reveals=("account", "owner"),
        ),
    ]
    phrase = "find the bank transaction with that reference code, open the account it was charged to and note its holder"
    return HopPlan(calls, holder, phrase)


def _plant_remove_payee(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_payees(state, value)
    payee = _new_payee(state, rng, name=vocab.person_name(rng), email=value)
    calls = [
        PlannedCall("list_payees", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("delete_payee", {"payeeId": None}, bind={"payeeId": (0, ("payees", 0, "id"))}),
    ]
    crit = expect_record(
        "payees", f"the payee with email {value} is removed", absent=True, id=payee.id, email=value
    )
    return ActionPlan(calls, [crit], "in online banking, remove the saved payee with that email address")


def _plant_payee_move(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    who = vocab.fresh(
        rng,
        vocab.person_name,
        lambda name: any(name.lower() in f"{p.name} {p.email}".lower() for p in state.payees.values()),
    )
    _drop_payees(state, who)
    other = next(c[0] for c in vocab.CITIES if c[0] != value)
    payee = _new_payee(state, rng, name=who, email=_unique_email(state, rng, who), bankCity=other)
    calls = [
        PlannedCall("list_payees", {"query": who}),
        PlannedCall(
            "update_payee",
            {"payeeId": None, "bankCity": value},
            inputs={"bankCity": "{value}"},
            bind={"payeeId": (0, ("payees", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "payees", f"the payee '{who}' banks in {value}", id=payee.id, name=who, bankCity=value
    )
    phrase = f"in online banking, change the bank branch city of the payee '{who}' to that city"
    return ActionPlan(calls, [crit], phrase)


def _plant_categorize(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_transactions(state, value)
    category = rng.choice(("groceries", "travel", "utilities", "dining"))
    before = rng.choice([c for c in CATEGORIES if c != category])
    account = (
        next(iter(state.accounts)) if state.accounts else _new_account(state, rng, "Everyday Checking").id
    )
    txn = _new_transaction(state, rng, account, date=value, category=before)
    calls = [
        PlannedCall("list_transactions", {"date": value}, inputs={"date": "{value}"}),
        PlannedCall(
            "categorize_transaction",
            {"transactionId": None, "category": category},
            bind={"transactionId": (0, ("transactions", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "transactions",
        f"the transaction {txn.reference} of {value} is categorized as {category}",
        id=txn.id,
        date=value,
        category=category,
    )
    phrase = f"in online banking, set the category of the transaction made on that date to '{category}'"
    return ActionPlan(calls, [crit], phrase)


def _plant_freeze(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_transactions(state, value)
    account = _new_account(
        state, rng, rng.choice(("Online Shopping Card", "Travel Card", "Household Checking"))
    )
    _new_transaction(state, rng, account.id, reference=value)
    calls = [
        PlannedCall("search_transactions", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "set_account_status",
            {"accountId": None, "status": "frozen"},
            bind={"accountId": (0, ("transactions", 0, "accountId"))},
        ),
    ]
    crit = expect_record(
        "accounts",
        f"the account {account.number} charged with {value} is frozen",
        id=account.id,
        status="frozen",
    )
    phrase = (
        "in online banking, freeze the account that the transaction with that reference code was charged to"
    )
    return ActionPlan(calls, [crit], phrase)


def _plant_transfer(state: BankingState, rng: random.Random, value: str) -> ActionPlan:
    _drop_transactions(state, value)
    source = _new_account(state, rng, "Rainy Day Savings", balance=float(rng.randint(20, 60)) * 100)
    target = _new_account(state, rng, "Bills Checking", balance=float(rng.randint(1, 5)) * 100)
    amount = float(rng.randint(5, 15) * 10)
    calls = [
        PlannedCall("list_accounts", {}),
        PlannedCall(
            "transfer",
            {"fromAccountId": source.id, "toAccountId": target.id, "amount": amount, "memo": value},
            inputs={"memo": "{value}"},
        ),
    ]
    crit = expect_record(
        "transactions",
        f"{amount:.2f} arrives in account {target.number} with memo {value}",
        accountId=target.id,
        amount=amount,
        category="transfer",
    )
    # `description` (the memo) is also expect_record's own parameter: add its condition directly
    crit.match["description"] = Condition(op="icontains", value=value)
    phrase = (
        f"in online banking, transfer {amount:.2f} USD from the account ending in {source.number} "
        f"to the account ending in {target.number}, with that reference code as the memo"
    )
    return ActionPlan(calls, [crit], phrase)


register_service(BankingService)

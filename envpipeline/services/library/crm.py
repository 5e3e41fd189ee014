"""CRM service (Salesforce/HubSpot-like): contacts, companies, deals and logged activities."""

from __future__ import annotations

import random
from operator import attrgetter
from typing import Annotated

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.services import vocab
from envpipeline.services.base import (
    Record,
    Service,
    ToolArgs,
    bad_request,
    check_reference,
    conflict,
    dump,
    find_record,
    next_id,
    text_hit,
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

INDUSTRIES = ("software", "logistics", "retail", "energy", "healthcare", "finance", "media")
SUFFIXES = ("Labs", "Systems", "Partners", "Logistics", "Foods", "Analytics", "Works")
STAGES = ("lead", "qualified", "proposal", "negotiation", "won", "lost")
KINDS = ("call", "email", "meeting", "note")
JOBS = ("CTO", "Head of Sales", "Procurement Lead", "Founder", "Operations Manager", "Analyst")
CONTACT_FIELDS = ("name", "email", "city", "jobTitle")
DEAL_FIELDS = ("title", "code", "owner")
_CONTACT_TEXT = attrgetter(*CONTACT_FIELDS)
_DEAL_TEXT = attrgetter(*DEAL_FIELDS)


class Company(Record):
    id: str
    name: str
    industry: str
    city: str
    domain: str


class Contact(Record):
    id: str
    name: str
    email: str
    phone: str = ""
    companyId: str | None = None
    city: str = ""
    jobTitle: str = ""


class Deal(Record):
    id: str
    code: str
    title: str
    companyId: str
    contactId: str | None = None
    owner: str = ""
    amount: float
    stage: str = "lead"
    closeDate: str


class Activity(Record):
    id: str
    contactId: str
    kind: str
    date: str
    note: str = ""


class CrmState(Strict):
    companies: dict[str, Company] = {}
    contacts: dict[str, Contact] = {}
    deals: dict[str, Deal] = {}
    activities: dict[str, Activity] = {}


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in name, email, city and job title")]


class ContactIdArgs(ToolArgs):
    contactId: Annotated[str, Field(description="contact id")]


class CreateContactArgs(ToolArgs):
    name: Annotated[str, Field(description="full name")]
    email: Annotated[str, Field(description="email address (unique)")]
    companyId: Annotated[str | None, Field(description="id of the contact's company")] = None
    city: Annotated[str, Field(description="city the contact is based in")] = ""
    jobTitle: Annotated[str, Field(description="job title")] = ""
    phone: Annotated[str, Field(description="phone number")] = ""


class UpdateContactArgs(ToolArgs):
    contactId: Annotated[str, Field(description="contact id")]
    email: Annotated[str | None, Field(description="new email address")] = None
    city: Annotated[str | None, Field(description="new city")] = None
    jobTitle: Annotated[str | None, Field(description="new job title")] = None
    phone: Annotated[str | None, Field(description="new phone number")] = None


class ListCompaniesArgs(ToolArgs):
    industry: Annotated[str | None, Field(description="only companies in this industry")] = None


class CompanyIdArgs(ToolArgs):
    companyId: Annotated[str, Field(description="company id")]


class CreateCompanyArgs(ToolArgs):
    name: Annotated[str, Field(description="company name (unique)")]
    industry: Annotated[str, Field(description=f"one of: {', '.join(INDUSTRIES)}")]
    city: Annotated[str, Field(description="headquarters city")] = ""
    domain: Annotated[str, Field(description="web domain, e.g. acme.test")] = ""


class ListDealsArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in deal title, code and owner")] = None
    stage: Annotated[str | None, Field(description="only deals in this stage")] = None
    companyId: Annotated[str | None, Field(description="only deals of this company")] = None


class CreateDealArgs(ToolArgs):
    title: Annotated[str, Field(description="deal title")]
    companyId: Annotated[str, Field(description="company id")]
    amount: Annotated[float, Field(description="deal value in EUR, positive")]
    closeDate: Annotated[str, Field(description="expected close date (YYYY-MM-DD)")]
    contactId: Annotated[str | None, Field(description="main contact id")] = None
    owner: Annotated[str, Field(description="sales rep who owns the deal")] = ""


class DealStageArgs(ToolArgs):
    dealId: Annotated[str, Field(description="deal id")]
    stage: Annotated[str, Field(description=f"new stage: {', '.join(STAGES)}")]


class LogActivityArgs(ToolArgs):
    contactId: Annotated[str, Field(description="contact id")]
    kind: Annotated[str, Field(description="call, email, meeting or note")]
    date: Annotated[str, Field(description="day of the activity (YYYY-MM-DD)")]
    note: Annotated[str, Field(description="what happened")] = ""


class ListActivitiesArgs(ToolArgs):
    contactId: Annotated[str | None, Field(description="only activities with this contact")] = None
    date: Annotated[str | None, Field(description="only activities on this day (YYYY-MM-DD)")] = None


def _new_contact(state: CrmState, rng: random.Random, **fields) -> Contact:
    name = fields.pop("name", None) or vocab.person_name(rng)
    if "email" not in fields:  # emails are unique among contacts (`create_contact` enforces it)
        taken = {c.email for c in state.contacts.values()}
        fields["email"] = vocab.unique(rng, lambda r: vocab.email_for(name, r), taken)
    fields.setdefault("city", vocab.city(rng)[0])
    fields.setdefault("companyId", rng.choice(list(state.companies)) if state.companies else None)
    cid = next_id("con", state.contacts)
    contact = Contact(
        id=cid, name=name, phone=f"+1-555-{rng.randint(1000, 9999)}", jobTitle=rng.choice(JOBS), **fields
    )
    state.contacts[cid] = contact
    return contact


def _new_deal(state: CrmState, rng: random.Random, **fields) -> Deal:
    fields.setdefault("code", vocab.unique(rng, vocab.code, {d.code for d in state.deals.values()}, "DL"))
    fields.setdefault("title", vocab.title(rng))
    fields.setdefault("owner", vocab.person_name(rng))
    fields.setdefault("stage", rng.choice(STAGES[:4]))
    fields.setdefault("closeDate", vocab.date(rng))
    did = next_id("deal", state.deals)
    company = rng.choice(list(state.companies))
    deal = Deal(id=did, companyId=company, amount=rng.randint(5, 200) * 1000.0, **fields)
    state.deals[did] = deal
    return deal


class CrmService(Service[CrmState]):
    name = "crm"
    title = "CRM"
    domain = "business"

    @classmethod
    def generate_state(cls, rng: random.Random) -> CrmState:
        state = CrmState()
        for _ in range(rng.randint(4, 6)):
            word = rng.choice(vocab.WORDS)
            cid = next_id("co", state.companies)
            state.companies[cid] = Company(
                id=cid,
                name=f"{word.capitalize()} {rng.choice(SUFFIXES)}",
                industry=rng.choice(INDUSTRIES),
                city=vocab.city(rng)[0],
                domain=f"{word}{rng.randint(1, 99)}.test",
            )
        names: set[str] = set()
        for _ in range(rng.randint(5, 8)):
            _new_contact(state, rng, name=vocab.unique(rng, vocab.person_name, names))
        for _ in range(rng.randint(4, 6)):
            _new_deal(state, rng, contactId=rng.choice(list(state.contacts)))
        for _ in range(rng.randint(4, 6)):
            aid = next_id("act", state.activities)
            state.activities[aid] = Activity(
                id=aid,
                contactId=rng.choice(list(state.contacts)),
                kind=rng.choice(KINDS),
                date=vocab.date(rng),
                note=vocab.sentence(rng),
            )
        return state

    @tool(writes=False)
    def search_contacts(self, args: QueryArgs) -> dict:
        """Search contacts by text in their name, email, city or job title."""
        q = args.query.strip().lower()
        if not q:
            raise bad_request("query must not be empty")
        hits = [c for c in self.state.contacts.values() if text_hit(q, _CONTACT_TEXT(c))]
        return {"contacts": [dump(c) for c in hits]}

    @tool(writes=False)
    def get_contact(self, args: ContactIdArgs) -> dict:
        """Get one contact with its logged activities."""
        contact = find_record(self.state.contacts, "contact", args.contactId)
        acts = [dump(a) for a in self.state.activities.values() if a.contactId == contact.id]
        return {"contact": dump(contact), "activities": acts}

    @tool(writes=True)
    def create_contact(self, args: CreateContactArgs) -> dict:
        """Create a contact; the email address must be unique."""
        check_reference(self.state.companies, "company", args.companyId)
        if "@" not in args.email or not args.name.strip():
            raise bad_request("a contact needs a name and a valid email address")
        if any(c.email.lower() == args.email.lower() for c in self.state.contacts.values()):
            raise conflict(f"a contact with email {args.email} already exists")
        cid = next_id("con", self.state.contacts)
        contact = Contact(id=cid, **args.model_dump())
        self.state.contacts[cid] = contact
        return {"contact": dump(contact)}

    @tool(writes=True)
    def update_contact(self, args: UpdateContactArgs) -> dict:
        """Update a contact's email, city, job title or phone."""
        contact = find_record(self.state.contacts, "contact", args.contactId)
        changes = {f: v for f, v in args.model_dump(exclude={"contactId"}).items() if v is not None}
        if not changes:
            raise bad_request("nothing to update; give email, city, jobTitle or phone")
        if "email" in changes and "@" not in changes["email"]:
            raise bad_request(f"invalid email '{changes['email']}'")
        for field, value in changes.items():
            setattr(contact, field, value)
        return {"contact": dump(contact), "updated": sorted(changes)}

    @tool(writes=True)
    def delete_contact(self, args: ContactIdArgs) -> dict:
        """Delete a contact and its activities."""
        check_reference(self.state.contacts, "contact", args.contactId)
        del self.state.contacts[args.contactId]
        for aid in [a.id for a in self.state.activities.values() if a.contactId == args.contactId]:
            del self.state.activities[aid]
        return {"deleted": args.contactId}

    @tool(writes=False)
    def list_companies(self, args: ListCompaniesArgs) -> dict:
        """List companies, optionally only one industry."""
        found = [c for c in self.state.companies.values() if not args.industry or c.industry == args.industry]
        return {"companies": [dump(c) for c in found]}

    @tool(writes=False)
    def get_company(self, args: CompanyIdArgs) -> dict:
        """Get one company with its contacts and deals."""
        company = find_record(self.state.companies, "company", args.companyId)
        contacts = [dump(c) for c in self.state.contacts.values() if c.companyId == company.id]
        deals = [dump(d) for d in self.state.deals.values() if d.companyId == company.id]
        return {"company": dump(company), "contacts": contacts, "deals": deals}

    @tool(writes=True)
    def create_company(self, args: CreateCompanyArgs) -> dict:
        """Create a company; names are unique."""
        if args.industry not in INDUSTRIES:
            raise bad_request(f"industry must be one of {', '.join(INDUSTRIES)}")
        if any(c.name.lower() == args.name.lower() for c in self.state.companies.values()):
            raise conflict(f"company '{args.name}' already exists")
        cid = next_id("co", self.state.companies)
        company = Company(id=cid, **args.model_dump())
        self.state.companies[cid] = company
        return {"company": dump(company)}

    @tool(writes=False)
    def list_deals(self, args: ListDealsArgs) -> dict:
        """List deals, optionally filtered by text (title, code, owner), stage or company."""
        check_reference(self.state.companies, "company", args.companyId)
        q = (args.query or "").strip().lower()
        found = [
            d
            for d in self.state.deals.values()
            if text_hit(q, _DEAL_TEXT(d))
            and (not args.stage or d.stage == args.stage)
            and (not args.companyId or d.companyId == args.companyId)
        ]
        return {"deals": [dump(d) for d in found]}

    @tool(writes=True)
    def create_deal(self, args: CreateDealArgs) -> dict:
        """Open a new deal with a company (stage 'lead')."""
        check_reference(self.state.companies, "company", args.companyId)
        check_reference(self.state.contacts, "contact", args.contactId)
        if args.amount <= 0:
            raise bad_request("amount must be positive")
        codes = {d.code for d in self.state.deals.values()}
        n = len(self.state.deals) + 1
        while f"DL-{9000 + n}" in codes:
            n += 1
        did = next_id("deal", self.state.deals)
        deal = Deal(id=did, code=f"DL-{9000 + n}", **args.model_dump())
        self.state.deals[did] = deal
        return {"deal": dump(deal)}

    @tool(writes=True)
    def update_deal_stage(self, args: DealStageArgs) -> dict:
        """Move a deal to another pipeline stage; won and lost deals are final."""
        deal = find_record(self.state.deals, "deal", args.dealId)
        if args.stage not in STAGES:
            raise bad_request(f"stage must be one of {', '.join(STAGES)}")
        if deal.stage in ("won", "lost"):
            raise conflict(f"deal {deal.code} is already {deal.stage}")
        if deal.stage == args.stage:
            raise conflict(f"deal {deal.code} is already in stage {args.stage}")
        deal.stage = args.stage
        return {"deal": dump(deal)}

    @tool(writes=True)
    def log_activity(self, args: LogActivityArgs) -> dict:
        """Log a call, email, meeting or note with a contact."""
        check_reference(self.state.contacts, "contact", args.contactId)
        if args.kind not in KINDS:
            raise bad_request("kind must be call, email, meeting or note")
        aid = next_id("act", self.state.activities)
        activity = Activity(id=aid, **args.model_dump())
        self.state.activities[aid] = activity
        return {"activity": dump(activity)}

    @tool(writes=False)
    def list_activities(self, args: ListActivitiesArgs) -> dict:
        """List logged activities, optionally with one contact or on one day."""
        check_reference(self.state.contacts, "contact", args.contactId)
        found = [
            a
            for a in self.state.activities.values()
            if (not args.contactId or a.contactId == args.contactId)
            and (not args.date or a.date == args.date)
        ]
        return {"activities": [dump(a) for a in found]}

    @classmethod
    def example_arguments(cls, state: CrmState) -> dict[str, dict]:
        contact = next(iter(state.contacts.values()))
        company = next(iter(state.companies.values()))
        deal = next(iter(state.deals.values()))
        act = next(iter(state.activities.values()))
        new_stage = "won" if deal.stage != "won" else "lost"
        return {
            "search_contacts": {"query": contact.name},
            "get_contact": {"contactId": contact.id},
            "create_contact": {"name": "Ada Lovelace", "email": "ada.l@example.com", "companyId": company.id},
            "update_contact": {"contactId": contact.id, "city": "Cork", "jobTitle": "VP Sales"},
            "delete_contact": {"contactId": contact.id},
            "list_companies": {"industry": company.industry},
            "get_company": {"companyId": company.id},
            "create_company": {"name": "Zephyr Holdings", "industry": "energy", "city": "Bergen"},
            "list_deals": {"companyId": deal.companyId},
            "create_deal": {
                "title": "Pilot rollout",
                "companyId": company.id,
                "amount": 12000,
                "closeDate": "2026-09-30",
                "contactId": contact.id,
            },
            "update_deal_stage": {"dealId": deal.id, "stage": new_stage},
            "log_activity": {"contactId": contact.id, "kind": "call", "date": "2026-02-03", "note": "intro"},
            "list_activities": {"contactId": act.contactId},
        }

    @classmethod
    def links(cls) -> list[Link[CrmState]]:
        return [
            Hop(
                "contact_city",
                "person",
                "city",
                _plant_contact_city,
                relation="the home city of the sales contact {of}",
            ),
            Hop(
                "contact_email",
                "person",
                "email",
                _plant_contact_email,
                relation="the email address on file for the sales contact {of}",
            ),
            Hop(
                "email_contact_name",
                "email",
                "person",
                _plant_email_name,
                relation="the full name of the sales contact whose email is {of}",
            ),
            Hop(
                "deal_close_date",
                "title",
                "date",
                _plant_deal_date,
                relation="the expected close date of the sales deal titled {of}",
            ),
            Hop(
                "deal_owner",
                "code",
                "person",
                _plant_deal_owner,
                relation="the sales rep who owns the deal with reference {of}",
            ),
            Hop(
                "contact_meeting_date",
                "person",
                "date",
                _plant_meeting_date,
                relation="the date of the meeting logged with the sales contact {of}",
            ),
            Hop(
                "contact_company_city",
                "email",
                "city",
                _plant_company_city,
                relation="the headquarters city of the company of the sales contact whose email is {of}",
            ),
            Action("log_call_with_contact", "person", _plant_log_call),
            Action("add_contact_with_email", "email", _plant_add_contact),
            Action("win_deal", "title", _plant_win_deal),
            Action("relocate_contact", "city", _plant_relocate),
            Action("delete_contact_by_email", "email", _plant_delete_contact),
            Action("create_company_in_city", "city", _plant_create_company),
            Action("open_deal_closing_on", "date", _plant_open_deal),
        ]


def _drop(collection: dict, value: str, fields: tuple[str, ...]) -> None:
    """Make a lookup unambiguous: remove records whose `fields` already mention `value`."""
    low = value.lower()
    for rid in [r.id for r in collection.values() if any(low in str(getattr(r, f)).lower() for f in fields)]:
        del collection[rid]


def _contact_hop(state: CrmState, rng: random.Random, value: str, field: str, reveal: str, phrase: str):
    _drop(state.contacts, value, CONTACT_FIELDS)
    contact = _new_contact(state, rng, **{field: value})
    return query_hop("search_contacts", value, ("contacts", 0, reveal), getattr(contact, reveal), phrase)


def _plant_contact_city(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up that person in the CRM contacts and note the city they are based in"
    return _contact_hop(state, rng, value, "name", "city", phrase)


def _plant_contact_email(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up that person in the CRM contacts and note their email address"
    return _contact_hop(state, rng, value, "name", "email", phrase)


def _plant_email_name(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    phrase = "search the CRM contacts for that email address and note the contact's full name"
    return _contact_hop(state, rng, value, "email", "name", phrase)


def _deal_hop(state: CrmState, rng: random.Random, value: str, field: str, reveal: str, phrase: str):
    _drop(state.deals, value, DEAL_FIELDS)
    deal = _new_deal(state, rng, **{field: value})
    return query_hop("list_deals", value, ("deals", 0, reveal), getattr(deal, reveal), phrase)


def _plant_deal_date(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    phrase = "find the CRM deal with that title and note its expected close date"
    return _deal_hop(state, rng, value, "title", "closeDate", phrase)


def _plant_deal_owner(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    phrase = "find the CRM deal with that reference code and note the name of the sales rep who owns it"
    return _deal_hop(state, rng, value, "code", "owner", phrase)


def _plant_log_call(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.contacts, value, CONTACT_FIELDS)
    contact = _new_contact(state, rng, name=value)
    day, note = vocab.date(rng), f"Discussed renewal {vocab.code(rng, 'RN')}"
    calls = [
        PlannedCall("search_contacts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "log_activity",
            {"contactId": None, "kind": "call", "date": day, "note": note},
            bind={"contactId": (0, ("contacts", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "activities", f"a call on {day} is logged with {value}", contactId=contact.id, kind="call", date=day
    )
    phrase = f"log a call with that person in the CRM on {day} with the note '{note}'"
    return ActionPlan(calls, [crit], phrase)


def _plant_add_contact(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.contacts, value, ("email",))
    name = vocab.person_name(rng)
    call = PlannedCall("create_contact", {"name": name, "email": value}, inputs={"email": "{value}"})
    crit = expect_record("contacts", f"a contact '{name}' with email {value} exists", name=name, email=value)
    return ActionPlan([call], [crit], f"add a CRM contact named '{name}' with that email address")


def _plant_win_deal(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.deals, value, DEAL_FIELDS)
    _new_deal(state, rng, title=value, stage="negotiation")
    calls = [
        PlannedCall("list_deals", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "update_deal_stage", {"dealId": None, "stage": "won"}, bind={"dealId": (0, ("deals", 0, "id"))}
        ),
    ]
    crit = expect_record("deals", f"the deal '{value}' is marked won", title=value, stage="won")
    return ActionPlan(calls, [crit], "mark the CRM deal with that title as won")


def _plant_relocate(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    name = vocab.unique(rng, vocab.person_name, {c.name for c in state.contacts.values()})
    _drop(state.contacts, name, CONTACT_FIELDS)
    other = next(c[0] for c in vocab.CITIES if c[0] != value)
    contact = _new_contact(state, rng, name=name, city=other)
    calls = [
        PlannedCall("search_contacts", {"query": name}),
        PlannedCall(
            "update_contact",
            {"contactId": None, "city": value},
            inputs={"city": "{value}"},
            bind={"contactId": (0, ("contacts", 0, "id"))},
        ),
    ]
    crit = expect_record("contacts", f"{name} is now based in {value}", id=contact.id, city=value)
    return ActionPlan(calls, [crit], f"update the CRM contact '{name}' to be based in that city")


def _new_company(state: CrmState, rng: random.Random, **fields) -> Company:
    taken = {c.name for c in state.companies.values()}
    name = vocab.unique(rng, lambda r: f"{r.choice(vocab.WORDS).capitalize()} {r.choice(SUFFIXES)}", taken)
    fields.setdefault("industry", rng.choice(INDUSTRIES))
    fields.setdefault("city", vocab.city(rng)[0])
    cid = next_id("co", state.companies)
    company = Company(
        id=cid, name=name, domain=f"{name.split()[0].lower()}{rng.randint(1, 99)}.test", **fields
    )
    state.companies[cid] = company
    return company


def _drop_contacts(state: CrmState, value: str) -> None:
    """`_drop` for contacts, also removing the activities of the dropped ones (ids are reused)."""
    _drop(state.contacts, value, CONTACT_FIELDS)
    for aid in [a.id for a in state.activities.values() if a.contactId not in state.contacts]:
        del state.activities[aid]


def _plant_meeting_date(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    _drop_contacts(state, value)
    contact = _new_contact(state, rng, name=value)
    day = vocab.date(rng)
    aid = next_id("act", state.activities)
    note = f"Walked through the {vocab.title(rng)} proposal."
    state.activities[aid] = Activity(id=aid, contactId=contact.id, kind="meeting", date=day, note=note)
    calls = [
        PlannedCall("search_contacts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_activities",
            {"contactId": None},
            bind={"contactId": (0, ("contacts", 0, "id"))},
            reveals=("activities", 0, "date"),
        ),
    ]
    phrase = "look up that person in the CRM contacts and note the date of the meeting logged with them"
    return HopPlan(calls, day, phrase)


def _plant_company_city(state: CrmState, rng: random.Random, value: str) -> HopPlan:
    _drop_contacts(state, value)
    company = _new_company(state, rng)
    other = next(c[0] for c in vocab.CITIES if c[0] != company.city)
    _new_contact(state, rng, email=value, companyId=company.id, city=other)
    calls = [
        PlannedCall("search_contacts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "get_company",
            {"companyId": None},
            bind={"companyId": (0, ("contacts", 0, "companyId"))},
            reveals=("company", "city"),
        ),
    ]
    phrase = "find the CRM contact with that email address, open their company and note its headquarters city"
    return HopPlan(calls, company.city, phrase)


def _plant_delete_contact(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    _drop_contacts(state, value)
    contact = _new_contact(state, rng, email=value)
    calls = [
        PlannedCall("search_contacts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("delete_contact", {"contactId": None}, bind={"contactId": (0, ("contacts", 0, "id"))}),
    ]
    crit = expect_record(
        "contacts", f"the contact with email {value} is deleted", absent=True, id=contact.id, email=value
    )
    return ActionPlan(calls, [crit], "delete the CRM contact with that email address")


def _plant_create_company(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    taken = {c.name for c in state.companies.values()}
    name = vocab.unique(rng, lambda r: f"{r.choice(vocab.WORDS).capitalize()} {r.choice(SUFFIXES)}", taken)
    industry = rng.choice(INDUSTRIES)
    call = PlannedCall(
        "create_company", {"name": name, "industry": industry, "city": value}, inputs={"city": "{value}"}
    )
    crit = expect_record(
        "companies", f"a company '{name}' headquartered in {value} exists", name=name, city=value
    )
    phrase = f"create a CRM company named '{name}' in the {industry} industry, headquartered in that city"
    return ActionPlan([call], [crit], phrase)


def _plant_open_deal(state: CrmState, rng: random.Random, value: str) -> ActionPlan:
    company = _new_company(state, rng)
    title = vocab.fresh(
        rng,
        vocab.title,
        lambda text: any(
            text.lower() in str(getattr(d, f)).lower() for d in state.deals.values() for f in DEAL_FIELDS
        ),
    )
    _drop(state.deals, title, DEAL_FIELDS)
    amount = float(rng.randint(5, 90) * 1000)
    calls = [
        PlannedCall("list_companies", {}),
        PlannedCall(
            "create_deal",
            {"title": title, "companyId": company.id, "amount": amount, "closeDate": value},
            inputs={"closeDate": "{value}"},
        ),
    ]
    crit = expect_record(
        "deals",
        f"a deal '{title}' with {company.name} closes on {value}",
        title=title,
        companyId=company.id,
        closeDate=value,
    )
    phrase = (
        f"open a CRM deal titled '{title}' with the company {company.name}, worth {amount:.0f} EUR "
        "and expected to close on that date"
    )
    return ActionPlan(calls, [crit], phrase)


register_service(CrmService)

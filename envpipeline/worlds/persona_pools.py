"""The pools personas are drawn from: names, cities, sites, trades with their tools and shops, story arcs.

Data only; `envpipeline.worlds.personas` draws from it with a seeded rng, so reordering or editing a
pool changes every persona (and every task id downstream).
"""

from __future__ import annotations

from dataclasses import dataclass

from envpipeline.models.world import StoryArc

FIRST = [
    "lars",
    "maja",
    "amara",
    "tomas",
    "ines",
    "kenji",
    "sofia",
    "noah",
    "leila",
    "oskar",
    "priya",
    "mateo",
    "freya",
    "jonas",
    "elena",
    "samir",
    "hanna",
    "diego",
    "yuki",
    "clara",
    "felix",
    "nadia",
    "emil",
    "zara",
    "arjun",
    "lina",
    "viktor",
    "rosa",
    "hugo",
    "aisha",
    "mei",
    "olu",
    "ruben",
    "astrid",
    "tariq",
    "ottilie",
    "pavel",
    "chiara",
    "kofi",
    "ingrid",
    "rafael",
    "selin",
    "joon",
    "marta",
    "idris",
    "greta",
    "luca",
    "anya",
    "bram",
    "noor",
]
LAST = [
    "petersen",
    "kowalski",
    "okafor",
    "novak",
    "silva",
    "tanaka",
    "rossi",
    "berg",
    "haddad",
    "lind",
    "sharma",
    "garcia",
    "holm",
    "weber",
    "ivanova",
    "rahman",
    "virtanen",
    "moreau",
    "costa",
    "fischer",
    "mensah",
    "dubois",
    "andersen",
    "nowak",
    "yilmaz",
    "kim",
    "ferreira",
    "jansen",
    "popescu",
    "lindqvist",
]
CITIES = [
    "Copenhagen",
    "Rotterdam",
    "Lyon",
    "Krakow",
    "Porto",
    "Gothenburg",
    "Munich",
    "Valencia",
    "Tallinn",
    "Bologna",
    "Ghent",
    "Bergen",
]
SITES = [
    "newsdaily.example",
    "recipes.example",
    "devforum.example",
    "trailmaps.example",
    "gearhub.example",
    "photolab.example",
    "bookclub.example",
    "marketwatch.example",
    "soundstage.example",
    "designboard.example",
    "fitlog.example",
    "travelnotes.example",
    "gardenhelp.example",
    "chessclub.example",
]


@dataclass(frozen=True)
class Trade:
    """A line of work: the apps its core tools come from, its shop domains, its specialities."""

    apps: tuple[str, ...]
    shop: tuple[str, ...]
    specialities: tuple[str, ...]


#: trade -> (apps its core tools are drawn from, shop domains of its catalogue, specialities).
#: An occupation is "<mode> <speciality> <trade>" (`MODES` x specialities x trades).
TRADES: dict[str, Trade] = {
    "AV technician": Trade(
        ("flights", "calendar", "shop", "files", "dm"),
        ("av", "computing"),
        ("live-sound", "conference", "theatre", "broadcast", "touring"),
    ),
    "teacher": Trade(
        ("calendar", "mail", "files", "chat", "bank"),
        ("classroom", "office"),
        ("high-school", "primary-school", "language", "music", "special-needs"),
    ),
    "nurse": Trade(
        ("calendar", "dm", "bank", "mail", "accounts"),
        ("clinical",),
        ("paediatric", "night-shift", "community", "ICU", "school"),
    ),
    "software developer": Trade(
        ("chat", "files", "accounts", "mail", "shop"),
        ("computing", "office"),
        ("backend", "mobile", "game", "embedded", "open-source"),
    ),
    "photographer": Trade(
        ("calendar", "mail", "files", "bank", "dm"),
        ("photography", "travel"),
        ("wedding", "food", "wildlife", "portrait", "real-estate"),
    ),
    "baker": Trade(
        ("shop", "bank", "mail", "chat", "files"),
        ("baking", "kitchen"),
        ("sourdough", "pastry", "wedding-cake", "market-stall", "gluten-free"),
    ),
    "journalist": Trade(
        ("flights", "files", "mail", "dm", "calendar"),
        ("computing", "travel"),
        ("travel", "sports", "science", "local-news", "investigative"),
    ),
    "graduate student": Trade(
        ("files", "mail", "chat", "calendar", "bank"),
        ("lab", "office"),
        ("biology", "history", "physics", "economics", "linguistics"),
    ),
    "sales representative": Trade(
        ("flights", "calendar", "mail", "bank", "chat"),
        ("office", "travel"),
        ("medical-device", "software", "wine", "industrial", "publishing"),
    ),
    "landscape architect": Trade(
        ("files", "calendar", "mail", "shop", "dm"),
        ("garden", "office"),
        ("urban", "park", "residential", "rooftop", "campus"),
    ),
    "personal trainer": Trade(
        ("calendar", "dm", "bank", "files", "shop"),
        ("fitness",),
        ("strength", "rehab", "running", "senior-fitness", "online"),
    ),
    "accountant": Trade(
        ("bank", "mail", "files", "accounts", "calendar"),
        ("office", "computing"),
        ("tax", "audit", "payroll", "small-business", "forensic"),
    ),
    "event planner": Trade(
        ("calendar", "mail", "dm", "shop", "flights"),
        ("av", "office"),
        ("wedding", "corporate", "festival", "charity", "conference"),
    ),
    "musician": Trade(
        ("dm", "flights", "calendar", "bank", "chat"),
        ("music", "av"),
        ("jazz", "session", "orchestral", "folk", "indie"),
    ),
    "veterinarian": Trade(
        ("calendar", "mail", "shop", "bank", "chat"),
        ("veterinary", "clinical"),
        ("small-animal", "equine", "farm", "exotic-pet", "shelter"),
    ),
    "IT administrator": Trade(
        ("accounts", "chat", "mail", "files", "calendar"),
        ("computing", "office"),
        ("school", "hospital", "law-firm", "retail", "municipal"),
    ),
    "architect": Trade(
        ("files", "mail", "calendar", "chat", "flights"),
        ("office", "computing"),
        ("housing", "heritage", "timber", "interior", "civic"),
    ),
    "pharmacist": Trade(
        ("shop", "calendar", "mail", "bank", "accounts"),
        ("clinical", "office"),
        ("hospital", "community", "compounding", "rural", "online"),
    ),
    "translator": Trade(
        ("files", "mail", "bank", "dm", "accounts"),
        ("office", "computing"),
        ("legal", "medical", "literary", "game", "subtitle"),
    ),
    "startup founder": Trade(
        ("chat", "flights", "bank", "mail", "calendar"),
        ("computing", "office"),
        ("fintech", "climate", "food-delivery", "edtech", "health"),
    ),
    "librarian": Trade(
        ("files", "mail", "calendar", "chat", "shop"),
        ("office", "classroom"),
        ("public", "university", "school", "archive", "mobile"),
    ),
    "chef": Trade(
        ("shop", "chat", "dm", "calendar", "bank"),
        ("kitchen", "baking"),
        ("head", "pastry", "private", "catering", "vegan"),
    ),
    "gardener": Trade(
        ("shop", "calendar", "bank", "dm", "files"),
        ("garden",),
        ("allotment", "estate", "nursery", "community", "orchard"),
    ),
    "tailor": Trade(
        ("shop", "dm", "bank", "files", "mail"),
        ("craft",),
        ("bridal", "bespoke", "alterations", "costume", "upholstery"),
    ),
    "lab technician": Trade(
        ("files", "chat", "calendar", "accounts", "shop"),
        ("lab", "clinical"),
        ("clinical", "food-testing", "environmental", "university", "forensic"),
    ),
    "physiotherapist": Trade(
        ("calendar", "bank", "mail", "files", "dm"),
        ("fitness", "clinical"),
        ("sports", "neuro", "paediatric", "home-visit", "hospital"),
    ),
    "tour guide": Trade(
        ("flights", "calendar", "dm", "bank", "mail"),
        ("travel",),
        ("city", "mountain", "food", "museum", "cycling"),
    ),
    "dog groomer": Trade(
        ("shop", "calendar", "dm", "bank", "chat"),
        ("veterinary",),
        ("mobile", "salon", "show-dog", "rescue", "cat-friendly"),
    ),
    "researcher": Trade(
        ("files", "flights", "mail", "chat", "accounts"),
        ("lab", "computing"),
        ("climate", "genomics", "robotics", "survey", "materials"),
    ),
    "sound engineer": Trade(
        ("files", "chat", "shop", "calendar", "bank"),
        ("av", "music"),
        ("studio", "podcast", "film", "mastering", "game-audio"),
    ),
    "craft seller": Trade(
        ("shop", "bank", "dm", "files", "accounts"),
        ("craft", "office"),
        ("knitwear", "quilting", "embroidery", "leather", "upcycled"),
    ),
    "coach": Trade(
        ("calendar", "chat", "dm", "bank", "flights"),
        ("fitness", "travel"),
        ("youth-football", "swim", "tennis", "climbing", "athletics"),
    ),
}
#: how the job is held; "" is plain.
MODES = ["", "freelance", "part-time", "senior", "newly qualified", "semi-retired"]
#: filler pools the arc variants draw from
ARC_FILLERS: dict[str, list[str]] = {
    "place": [
        "Lisbon",
        "Oslo",
        "Athens",
        "Dublin",
        "Vienna",
        "Seville",
        "Edinburgh",
        "Riga",
        "Prague",
        "Naples",
        "Zurich",
        "Ljubljana",
        "Marseille",
        "Helsinki",
        "Budapest",
        "Bruges",
    ],
    "thing": [
        "a standing desk",
        "a new camera",
        "running shoes",
        "a coffee grinder",
        "a tablet",
        "a bicycle",
        "a sofa",
        "a drone",
        "a sewing machine",
        "a tent",
        "an e-reader",
        "a keyboard",
        "a blender",
        "a monitor",
        "a backpack",
        "a printer",
    ],
    "client": [
        "a local brewery",
        "a dental clinic",
        "a design studio",
        "a city council",
        "a bookshop",
        "a football club",
        "a hotel chain",
        "a museum",
        "a law firm",
        "a food truck",
        "a school",
        "a logistics firm",
        "a bakery chain",
        "a charity",
        "a yoga studio",
        "a radio station",
    ],
    "people": [
        "their parents",
        "a cousin",
        "an old school friend",
        "their sister",
        "their brother",
        "grandparents",
        "a former colleague",
        "their godchild",
        "an aunt",
        "their partner's family",
        "a university friend",
        "a pen pal",
        "their uncle",
        "a neighbour",
        "a climbing partner",
        "a mentor",
    ],
    "goal": [
        "a half-marathon",
        "a 10k run",
        "a charity swim",
        "a cycling sportive",
        "a triathlon",
        "a hiking trip",
        "a rowing race",
        "a stair climb",
        "a trail run",
        "a duathlon",
        "a mountain trek",
        "a fun run",
        "a relay",
        "a dance show",
        "a martial-arts grading",
        "a marathon",
    ],
    "topic": [
        "tax",
        "insurance",
        "energy bills",
        "subscriptions",
        "rent",
        "savings",
        "a car loan",
        "a mortgage",
        "pensions",
        "a credit card",
        "school fees",
        "a phone contract",
        "gym fees",
        "a holiday fund",
        "childcare",
        "council tax",
    ],
}
#: base arc -> (filler pool, description with one {} for the filler, steps an arc variant may add)
ARC_SHAPES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "conference-trip": (
        "place",
        "travels to a conference in {}",
        ("reply_email", "share_document", "pay_bill"),
    ),
    "home-office-upgrade": (
        "thing",
        "upgrades the home office with {}",
        ("pay_bill", "write_journal", "update_todo"),
    ),
    "client-project": (
        "client",
        "delivers a project for {}",
        ("reply_email", "team_standup_chat", "update_todo"),
    ),
    "fitness-goal": ("goal", "trains for {}", ("dm_friend_plans", "update_todo", "browse_shop")),
    "budget-cleanup": ("topic", "sorts out {}", ("download_receipt", "reply_email", "write_journal")),
    "family-visit": (
        "people",
        "plans a visit to {} that falls through",
        ("reply_email", "write_journal", "update_todo"),
    ),
    "side-business": (
        "client",
        "runs a side business supplying {}",
        ("order_product", "reply_email", "update_todo"),
    ),
    "security-hygiene": (
        "topic",
        "cleans up the online accounts for {}",
        ("reply_email", "write_journal", "share_document"),
    ),
    "inbox-zero": (
        "topic",
        "fights an inbox full of mail about {}",
        ("update_todo", "write_journal", "pay_bill"),
    ),
    "team-launch": (
        "client",
        "launches a team product for {}",
        ("reply_email", "update_todo", "restock_supplies"),
    ),
    "unhappy-purchase": (
        "thing",
        "buys {} and sends it back",
        ("reply_email", "write_journal", "browse_shop"),
    ),
    "weekend-getaway": (
        "place",
        "books a weekend in {} with friends",
        ("pay_bill", "update_todo", "share_document"),
    ),
    "new-job": ("client", "starts a new job at {}", ("change_password", "update_todo", "reply_email")),
    "moving-house": (
        "place",
        "moves to a new flat in {}",
        ("reply_email", "restock_supplies", "dm_friend_plans"),
    ),
    "reading-challenge": (
        "goal",
        "keeps up a reading challenge while training for {}",
        ("share_document", "dm_friend_plans", "update_todo"),
    ),
    "team-offsite": (
        "place",
        "organises a team offsite in {}",
        ("reply_email", "team_standup_chat", "pay_bill"),
    ),
    "tax-season": (
        "topic",
        "prepares the yearly return, including {}",
        ("transfer_savings", "reply_email", "write_journal"),
    ),
    "festival-tour": (
        "place",
        "plays a string of festival gigs ending in {}",
        ("restock_supplies", "write_journal", "pay_bill"),
    ),
    "new-laptop": (
        "thing",
        "replaces a broken laptop and buys {}",
        ("sign_up_service", "share_document", "update_todo"),
    ),
    "mentoring": (
        "people",
        "mentors a junior colleague recommended by {}",
        ("reply_email", "write_journal", "update_todo"),
    ),
    "savings-plan": ("thing", "saves up for {}", ("pay_bill", "order_product", "write_journal")),
    "community-garden": (
        "people",
        "helps run a community garden with {}",
        ("order_product", "dm_friend_plans", "write_journal"),
    ),
    "newsletter-launch": (
        "topic",
        "starts a personal newsletter about {}",
        ("reply_email", "team_standup_chat", "update_todo"),
    ),
    "late-refund": (
        "place",
        "chases a refund for a cancelled trip to {}",
        ("download_receipt", "write_journal", "dm_friend_plans"),
    ),
}

#: the base arcs (story order of skills); `ARC_SHAPES` turns each into many named variants
ARCS: list[StoryArc] = [
    StoryArc(
        name="conference-trip",
        description="travels to a conference abroad",
        skills=["book_flight", "plan_trip", "rent_car", "write_journal"],
    ),
    StoryArc(
        name="home-office-upgrade",
        description="upgrades the home office equipment",
        skills=["order_product", "track_delivery", "download_receipt", "track_delivery"],
    ),
    StoryArc(
        name="client-project",
        description="delivers a project for a client",
        skills=["schedule_meeting", "share_document", "invoice_client"],
    ),
    StoryArc(
        name="fitness-goal",
        description="trains for a 10k run",
        skills=["gym_session", "write_journal", "gym_session", "order_product"],
    ),
    StoryArc(
        name="budget-cleanup",
        description="gets personal finances in order",
        skills=["pay_bill", "transfer_savings", "update_todo", "pay_bill"],
    ),
    StoryArc(
        name="family-visit",
        description="plans a family visit that falls through",
        skills=["dm_friend_plans", "book_flight", "cancel_flight"],
    ),
    StoryArc(
        name="side-business",
        description="runs a small side business",
        skills=["restock_supplies", "invoice_client", "salary_deposit"],
    ),
    StoryArc(
        name="security-hygiene",
        description="cleans up passwords and online accounts",
        skills=["change_password", "sign_up_service", "update_todo"],
    ),
    StoryArc(
        name="inbox-zero",
        description="fights the overflowing inbox",
        skills=["receive_newsletter", "reply_email", "reply_email"],
    ),
    StoryArc(
        name="team-launch",
        description="launches a team product",
        skills=["team_standup_chat", "schedule_meeting", "share_document", "team_standup_chat"],
    ),
    StoryArc(
        name="unhappy-purchase",
        description="buys something and sends it back",
        skills=["order_product", "track_delivery", "track_delivery", "return_product"],
    ),
    StoryArc(
        name="weekend-getaway",
        description="books a weekend away with friends",
        skills=["dm_friend_plans", "rent_car", "write_journal"],
    ),
    StoryArc(
        name="new-job",
        description="starts a new job",
        skills=["salary_deposit", "sign_up_service", "schedule_meeting"],
    ),
    StoryArc(
        name="moving-house",
        description="moves to a new flat",
        skills=["update_todo", "order_product", "pay_bill", "share_document"],
    ),
    StoryArc(
        name="reading-challenge",
        description="keeps up a reading challenge",
        skills=["browse_shop", "order_product", "write_journal"],
    ),
    StoryArc(
        name="team-offsite",
        description="organises a team offsite",
        skills=["schedule_meeting", "book_flight", "restock_supplies", "plan_trip"],
    ),
    StoryArc(
        name="tax-season",
        description="prepares the yearly tax return",
        skills=["download_receipt", "share_document", "pay_bill", "update_todo"],
    ),
    StoryArc(
        name="festival-tour",
        description="plays a string of festival gigs",
        skills=["book_flight", "team_standup_chat", "plan_trip", "invoice_client"],
    ),
    StoryArc(
        name="new-laptop",
        description="replaces a broken laptop and restores the accounts",
        skills=["order_product", "track_delivery", "change_password", "write_journal"],
    ),
    StoryArc(
        name="mentoring",
        description="mentors a junior colleague",
        skills=["dm_friend_plans", "schedule_meeting", "share_document"],
    ),
    StoryArc(
        name="savings-plan",
        description="saves up for a big purchase",
        skills=["salary_deposit", "transfer_savings", "browse_shop", "transfer_savings"],
    ),
    StoryArc(
        name="community-garden",
        description="helps run a community garden",
        skills=["restock_supplies", "team_standup_chat", "gym_session"],
    ),
    StoryArc(
        name="newsletter-launch",
        description="starts writing a personal newsletter",
        skills=["write_journal", "sign_up_service", "receive_newsletter", "share_document"],
    ),
    StoryArc(
        name="late-refund",
        description="chases a refund for a cancelled trip",
        skills=["book_flight", "cancel_flight", "reply_email", "pay_bill"],
    ),
]
RELATIONS = ["colleague", "colleague", "client", "friend", "family"]
DOMAINS = ["example.org", "example.net", "mail.example"]
WORDS = ["harbor", "maple", "copper", "lantern", "meadow", "falcon", "cobalt", "willow"]
STOPWORDS = {
    "the",
    "and",
    "for",
    "with",
    "who",
    "this",
    "month",
    "relies",
    "often",
    "visits",
    "close",
    "contacts",
    "lives",
    "year",
    "old",
    "works",
    "from",
    "that",
    "on",
    "in",
    "a",
    "an",
    "of",
    "to",
}

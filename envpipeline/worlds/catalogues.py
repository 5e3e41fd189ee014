"""Per-persona shop catalogues, tied to the persona's trade and drawn combinatorially.

A shop domain (baking, photography, clinical, ...) holds categories of base items (name, price in
cents, description). A persona's trade (`persona_pools.TRADES`) names its domains; its catalogue is
`TRADE_ITEMS` items from those domains (at least `MIN_SUPPLIES` from its ``supplies`` category,
which the `restock_supplies` skill orders from) plus `PERSONAL_ITEMS` from personal domains (home,
books, outdoor, ...). Each drawn item gets a qualifier ("Compact", "Heavy-duty", ...) and a price
jitter, so two bakers' shops share a domain but rarely a product list. Everything is a pure function
of the persona (``random.Random("<persona_id>:0:catalogue")``); `all_product_names` enumerates every
name a catalogue can hold (the masking lexicon uses it).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from envpipeline.errors import ConfigError
from envpipeline.models.world import Persona

TRADE_ITEMS = 10
MIN_SUPPLIES = 3
PERSONAL_ITEMS = 4
QUALIFIERS = ["", "Compact", "Heavy-duty", "Pro", "Eco", "Classic", "Travel", "Premium", "Basic", "XL"]

# domain -> category -> (base item name, price in cents, description)
Items = list[tuple[str, int, str]]
DOMAINS: dict[str, dict[str, Items]] = {
    "baking": {
        "bakeware": [
            ("proofing basket", 2199, "Rattan banneton for 1 kg loaves."),
            ("loaf tin set", 2999, "Three non-stick tins."),
            ("baking steel", 7999, "6 mm steel for crusty bread."),
            ("cooling rack", 1599, "Stackable wire rack."),
        ],
        "ingredients": [
            ("rye flour 5 kg", 1899, "Stone-ground whole rye."),
            ("dried yeast 500 g", 999, "Instant dry yeast."),
            ("vanilla pods", 1499, "Five Madagascar pods."),
            ("cane sugar 10 kg", 2299, "Unrefined cane sugar."),
        ],
        "supplies": [
            ("parchment paper roll", 899, "Silicone-coated, 50 m."),
            ("bread bags (100)", 1299, "Paper bags with window."),
            ("piping bags (50)", 799, "Disposable, 40 cm."),
            ("cake boxes (25)", 1899, "White boxes with lids."),
        ],
    },
    "kitchen": {
        "cookware": [
            ("chef's knife", 6999, "20 cm forged blade."),
            ("cast-iron skillet", 4599, "28 cm, pre-seasoned."),
            ("stock pot", 5499, "12 l stainless steel."),
            ("mandoline slicer", 3499, "Adjustable blade."),
        ],
        "supplies": [
            ("food containers (20)", 2499, "Stackable, microwave safe."),
            ("kitchen towels (10)", 1599, "Cotton waffle weave."),
            ("disposable gloves (100)", 999, "Nitrile, food safe."),
            ("order tickets (500)", 1199, "Carbon-copy pads."),
        ],
    },
    "photography": {
        "camera gear": [
            ("camera strap", 2999, "Padded quick-release strap."),
            ("prime lens 50 mm", 24999, "f/1.8 autofocus lens."),
            ("speedlight flash", 12999, "Wireless TTL flash."),
            ("light stand", 3999, "2.6 m air-cushioned stand."),
        ],
        "supplies": [
            ("SD card 128 GB", 2499, "UHS-II, 250 MB/s."),
            ("lens cleaning kit", 1299, "Blower, brush and cloths."),
            ("camera batteries (2)", 4999, "Spare lithium batteries."),
            ("print paper A4 (50)", 2999, "Glossy photo paper."),
        ],
    },
    "av": {
        "audio": [
            ("XLR cable 10 m", 2499, "Balanced microphone cable."),
            ("wireless microphone", 18999, "Handheld UHF system."),
            ("DI box", 5999, "Passive direct box."),
            ("stage monitor", 29999, "Active 12-inch wedge."),
        ],
        "supplies": [
            ("gaffer tape 50 m", 1899, "Matte black cloth tape, no residue."),
            ("AA batteries (24)", 1599, "Alkaline, long shelf life."),
            ("cable ties (200)", 899, "Reusable velcro ties."),
            ("HDMI cable 2 m", 1299, "High-speed HDMI 2.1 cable, braided."),
        ],
    },
    "computing": {
        "electronics": [
            ("USB-C hub", 4599, "Hub with HDMI, SD reader and 100 W pass-through."),
            ("mechanical keyboard", 8999, "Hot-swappable switches."),
            ("27-inch monitor", 27999, "QHD IPS panel."),
            ("wireless headset", 8999, "Noise-cancelling over-ear headset."),
        ],
        "supplies": [
            ("USB-C cables (3)", 1499, "1 m, 60 W."),
            ("screen wipes (100)", 699, "Alcohol-free."),
            ("SSD 1 TB", 7999, "External NVMe drive."),
            ("network cable 5 m", 999, "Cat 6, snagless."),
        ],
    },
    "office": {
        "stationery": [
            ("A5 dotted notebook", 1499, "192 pages, lay-flat binding."),
            ("gel pen set", 899, "Ten colours, 0.5 mm."),
            ("desk organiser", 2499, "Bamboo, five compartments."),
            ("LED desk lamp", 3999, "Dimmable, warm to cold white."),
        ],
        "supplies": [
            ("printer paper (500)", 699, "80 g/m2 A4."),
            ("label printer tape", 1399, "12 mm white tape, 8 m."),
            ("toner cartridge", 6999, "Black, 3,000 pages."),
            ("envelopes C5 (100)", 1099, "Self-seal."),
        ],
    },
    "clinical": {
        "medical": [
            ("stethoscope", 8999, "Dual-head adult stethoscope."),
            ("blood pressure monitor", 5999, "Upper-arm, memory for two."),
            ("pulse oximeter", 2999, "Fingertip, OLED display."),
            ("penlight", 999, "LED pupil gauge light."),
        ],
        "supplies": [
            ("exam gloves (200)", 1899, "Nitrile, powder-free."),
            ("face masks (50)", 1299, "Type IIR."),
            ("alcohol swabs (200)", 799, "70% isopropyl."),
            ("compression socks", 1999, "Knee-high, 15-20 mmHg."),
        ],
    },
    "fitness": {
        "training": [
            ("adjustable dumbbells", 11999, "2 x 2-24 kg, quick dial."),
            ("kettlebell 16 kg", 4999, "Cast iron."),
            ("resistance bands", 1999, "Five strengths."),
            ("yoga mat", 2999, "6 mm, non-slip."),
        ],
        "supplies": [
            ("chalk block (8)", 999, "Magnesium carbonate."),
            ("foam roller", 2499, "High-density, 45 cm."),
            ("protein powder 2 kg", 4599, "Unflavoured whey."),
            ("gym towels (4)", 1599, "Microfibre."),
        ],
    },
    "garden": {
        "tools": [
            ("pruning shears", 2999, "Bypass secateurs."),
            ("garden spade", 3999, "Stainless, ash handle."),
            ("watering can 10 l", 1999, "Galvanised steel."),
            ("soil pH meter", 1499, "Three-in-one probe."),
        ],
        "supplies": [
            ("seed trays (10)", 1299, "With drainage."),
            ("compost 40 l", 899, "Peat-free."),
            ("plant labels (100)", 599, "Writable plastic."),
            ("garden twine", 499, "Jute, 150 m."),
        ],
    },
    "music": {
        "instruments": [
            ("guitar strings", 1299, "Light gauge, coated."),
            ("capo", 1599, "Quick-change."),
            ("metronome", 2499, "Digital with tuner."),
            ("music stand", 2999, "Folding, steel."),
        ],
        "supplies": [
            ("instrument cable 6 m", 1999, "Jack to jack."),
            ("spare picks (24)", 599, "Mixed gauge."),
            ("reed pack (10)", 2199, "Strength 2.5."),
            ("valve oil", 899, "Synthetic."),
        ],
    },
    "travel": {
        "luggage": [
            ("travel backpack 30 l", 7999, "Cabin-size backpack with laptop sleeve."),
            ("universal travel adapter", 2499, "EU/UK/US plugs, two USB ports."),
            ("packing cubes (4)", 2299, "Compression cubes."),
            ("neck pillow", 1999, "Memory foam."),
        ],
        "supplies": [
            ("travel toiletry bottles", 899, "TSA-size silicone."),
            ("luggage tags (2)", 799, "Leather."),
            ("power bank 20000 mAh", 3499, "Two USB-C ports, airline safe."),
            ("passport wallet", 1999, "RFID blocking."),
        ],
    },
    "veterinary": {
        "animal care": [
            ("dog harness", 2999, "Reflective, padded."),
            ("cat carrier", 3999, "Top-loading."),
            ("grooming brush", 1299, "Self-cleaning slicker."),
            ("pet scale", 4999, "Digital, up to 100 kg."),
        ],
        "supplies": [
            ("puppy pads (50)", 1799, "Leak-proof."),
            ("treat pouches (20)", 1199, "Training treats."),
            ("bandage wrap (12)", 999, "Self-adhesive."),
            ("flea combs (5)", 699, "Fine steel teeth."),
        ],
    },
    "classroom": {
        "teaching": [
            ("whiteboard markers (12)", 1199, "Low-odour, assorted."),
            ("document camera", 8999, "USB, 8 MP."),
            ("timer cube", 1499, "Flip to start."),
            ("class set of calculators", 12999, "Scientific, 30 pieces."),
        ],
        "supplies": [
            ("exercise books (50)", 2499, "A4 lined."),
            ("sticky notes (12)", 999, "76 x 76 mm."),
            ("glue sticks (30)", 1299, "Washable."),
            ("laminating pouches (100)", 1599, "A4, 125 micron."),
        ],
    },
    "craft": {
        "textiles": [
            ("fabric shears", 3499, "25 cm, forged steel."),
            ("cutting mat A2", 2799, "Self-healing."),
            ("sewing machine needles", 899, "Universal, assorted."),
            ("wool yarn bundle", 3999, "Merino, ten skeins."),
        ],
        "supplies": [
            ("thread spools (20)", 1499, "Polyester, assorted."),
            ("pins and clips", 799, "Glass-head pins."),
            ("chalk markers", 699, "Tailor's chalk."),
            ("craft glue", 599, "Fabric glue 100 ml."),
        ],
    },
    "lab": {
        "lab equipment": [
            ("digital caliper", 2999, "150 mm, 0.01 mm."),
            ("magnifier lamp", 4599, "5 dioptre LED."),
            ("precision scale", 3999, "0.01 g resolution."),
            ("safety goggles", 1299, "Anti-fog."),
        ],
        "supplies": [
            ("sample bags (100)", 999, "Zip-lock, writable."),
            ("pipette tips (1000)", 2499, "200 ul."),
            ("lab notebook", 1999, "Numbered pages."),
            ("nitrile gloves (100)", 1299, "Powder-free."),
        ],
    },
}
# personal domains every catalogue mixes in a few items from
PERSONAL: dict[str, Items] = {
    "books": [
        ("paperback novel", 1199, "Award-winning literary fiction."),
        ("weeknight cookbook", 2499, "100 recipes under 30 minutes."),
        ("city walking guide", 1899, "Maps and walks."),
        ("puzzle book", 899, "200 logic puzzles."),
    ],
    "home": [
        ("electric kettle", 3299, "1.7 l, temperature control."),
        ("espresso beans 1 kg", 2399, "Medium roast, single origin."),
        ("throw blanket", 3499, "Recycled wool."),
        ("houseplant pot", 1599, "Ceramic, 20 cm."),
    ],
    "outdoor": [
        ("insulated bottle 0.75 l", 2199, "Keeps drinks cold for 24 h."),
        ("two-person tent", 15999, "Lightweight three-season tent."),
        ("headlamp", 2499, "Rechargeable, 400 lm."),
        ("rain jacket", 8999, "Waterproof, packable."),
    ],
    "wellbeing": [
        ("running shoes", 11999, "Neutral road shoes."),
        ("sleep mask", 999, "Contoured silk."),
        ("herbal tea set", 1499, "Twelve blends."),
        ("step counter", 3999, "Clip-on pedometer."),
    ],
}


@dataclass(frozen=True)
class Product:
    """One catalogue row (the shop's products table less its stock)."""

    sku: str
    name: str
    category: str
    price_cents: int
    description: str


def product_name(qualifier: str, base: str) -> str:
    """The shown name: 'Compact proofing basket', or the capitalized base without a qualifier."""
    name = f"{qualifier} {base}" if qualifier else base
    return name[0].upper() + name[1:]


def sku_of(name: str) -> str:
    """A stable SKU from the product name: initials of its words plus a short hash."""
    words = re.findall(r"[A-Za-z0-9]+", name)
    stem = "".join(w[:3] for w in words[:3]).upper()
    return f"SKU-{stem}-{hashlib.sha256(name.encode()).hexdigest()[:4].upper()}"


def _base_items(domains: list[str]) -> list[tuple[str, str, int, str]]:
    out = []
    for domain in domains:
        if domain not in DOMAINS:
            raise ConfigError(f"unknown shop domain {domain!r}; known: {', '.join(sorted(DOMAINS))}")
        for category, items in DOMAINS[domain].items():
            out += [(category, name, price, desc) for name, price, desc in items]
    return out


def catalogue_for(persona: Persona, domains: list[str]) -> list[Product]:
    """The persona's catalogue from its trade's `domains` (supplies first) plus personal items."""
    rng = random.Random(f"{persona.persona_id}:0:catalogue")
    trade = _base_items(domains)
    supplies = [i for i in trade if i[0] == "supplies"]
    rest = [i for i in trade if i[0] != "supplies"]
    picked = rng.sample(supplies, min(MIN_SUPPLIES, len(supplies)))
    pool = rest + [s for s in supplies if s not in picked]
    picked += rng.sample(pool, min(TRADE_ITEMS - len(picked), len(pool)))
    personal_pool = [(c, n, p, d) for c, items in PERSONAL.items() for n, p, d in items]
    picked += rng.sample(personal_pool, PERSONAL_ITEMS)
    products: list[Product] = []
    for category, base, price, desc in picked:
        name = product_name(rng.choice(QUALIFIERS), base)
        jitter = rng.randint(85, 120) / 100
        products.append(
            Product(sku_of(name), name, category, max(99, int(price * jitter) // 100 * 100 + 99), desc)
        )
    return products


@lru_cache(maxsize=1)
def all_product_names() -> frozenset[str]:
    """Every product name any catalogue can hold (with and without a qualifier)."""
    bases = [n for d in DOMAINS.values() for items in d.values() for n, _, _ in items]
    bases += [n for items in PERSONAL.values() for n, _, _ in items]
    return frozenset(product_name(q, b) for q in QUALIFIERS for b in bases)

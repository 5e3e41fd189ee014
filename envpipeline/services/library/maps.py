"""Maps service: places with coordinates, geocoding, distances, routes and saved places."""

from __future__ import annotations

import math
import random
import zlib
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

CATEGORIES = ("cafe", "museum", "park", "station", "office", "hotel", "restaurant", "market", "landmark")
SPEEDS_KMH = {"walking": 5.0, "cycling": 15.0, "transit": 30.0, "driving": 50.0}
CITY_INFO = {c[0].lower(): c for c in vocab.CITIES}


class Place(Record):
    id: str
    name: str
    category: str
    address: str
    city: str
    country: str
    latitude: float
    longitude: float
    code: str


class SavedPlace(Record):
    id: str
    placeId: str
    label: str
    note: str = ""


class Route(Record):
    id: str
    originPlaceId: str
    destinationPlaceId: str
    mode: str
    date: str
    distanceKm: float
    durationMin: int
    destinationCity: str


class MapsState(Strict):
    places: dict[str, Place] = {}
    saved: dict[str, SavedPlace] = {}
    routes: dict[str, Route] = {}


class SearchPlacesArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in name, address, city and place code")] = ""
    city: Annotated[str | None, Field(description="only places in this city")] = None
    category: Annotated[str | None, Field(description="only places of this category, e.g. cafe")] = None


class PlaceIdArgs(ToolArgs):
    placeId: Annotated[str, Field(description="place id")]


class AddPlaceArgs(ToolArgs):
    name: Annotated[str, Field(description="place name")]
    city: Annotated[str, Field(description="city the place is in")]
    category: Annotated[str, Field(description=f"one of: {', '.join(CATEGORIES)}")]
    address: Annotated[str, Field(description="street address")] = ""


class GeocodeArgs(ToolArgs):
    query: Annotated[str, Field(description="a place name, street address or city name")]


class ReverseGeocodeArgs(ToolArgs):
    latitude: Annotated[float, Field(description="latitude in degrees, -90 to 90")]
    longitude: Annotated[float, Field(description="longitude in degrees, -180 to 180")]


class DistanceArgs(ToolArgs):
    fromPlaceId: Annotated[str, Field(description="id of the first place")]
    toPlaceId: Annotated[str, Field(description="id of the second place")]


class DirectionsArgs(ToolArgs):
    originPlaceId: Annotated[str, Field(description="id of the starting place")]
    destinationPlaceId: Annotated[str, Field(description="id of the destination place")]
    mode: Annotated[str, Field(description="walking, cycling, transit or driving")] = "driving"


class SaveRouteArgs(DirectionsArgs):
    date: Annotated[str, Field(description="travel day (YYYY-MM-DD)")]


class ListRoutesArgs(ToolArgs):
    date: Annotated[str | None, Field(description="only routes planned for this day (YYYY-MM-DD)")] = None


class RouteIdArgs(ToolArgs):
    routeId: Annotated[str, Field(description="saved route id")]


class SavePlaceArgs(ToolArgs):
    placeId: Annotated[str, Field(description="id of the place to save")]
    label: Annotated[str, Field(description="label of the saved place")]
    note: Annotated[str, Field(description="optional note")] = ""


class ListSavedArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in labels and notes")] = None


class SavedIdArgs(ToolArgs):
    savedId: Annotated[str, Field(description="saved-place id")]


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return round(6371.0 * 2 * math.asin(math.sqrt(a)), 2)


def _new_code(state: MapsState, seed: str) -> str:
    codes = {p.code for p in state.places.values()}
    n = zlib.crc32(seed.encode()) % 9000 + 1000
    while f"PLC-{n}" in codes:
        n = n % 9999 + 1
    return f"PLC-{n}"


def _make_place(state: MapsState, rng: random.Random, **fields) -> Place:
    city, country, lat, lon = CITY_INFO[fields.pop("city", vocab.city(rng)[0]).strip().lower()]
    cat = fields.pop("category", rng.choice(CATEGORIES))
    word = rng.choice(vocab.WORDS).capitalize()
    name = fields.pop("name", f"{word} {cat.capitalize()}")
    fields.setdefault("address", f"{rng.randint(1, 240)} {rng.choice(vocab.WORDS).capitalize()} Street")
    fields.setdefault("code", _new_code(state, f"{name}|{city}|{len(state.places)}"))
    pid = next_id("plc", state.places)
    lat, lon = round(lat + rng.uniform(-0.04, 0.04), 5), round(lon + rng.uniform(-0.04, 0.04), 5)
    place = Place(
        id=pid, name=name, category=cat, city=city, country=country, latitude=lat, longitude=lon, **fields
    )
    state.places[pid] = place
    return place


def _route(state: MapsState, origin: Place, dest: Place, mode: str, day: str) -> Route:
    km = haversine_km(origin.latitude, origin.longitude, dest.latitude, dest.longitude)
    rid = next_id("rte", state.routes)
    minutes = max(1, round(km / SPEEDS_KMH[mode] * 60))
    return Route(
        id=rid,
        originPlaceId=origin.id,
        destinationPlaceId=dest.id,
        mode=mode,
        date=day,
        distanceKm=km,
        durationMin=minutes,
        destinationCity=dest.city,
    )


class MapsService(Service[MapsState]):
    name = "maps"
    title = "Maps"
    domain = "information"

    @classmethod
    def generate_state(cls, rng: random.Random) -> MapsState:
        state = MapsState()
        for _ in range(rng.randint(6, 9)):
            _make_place(state, rng)
        places = list(state.places.values())
        for place in rng.sample(places, rng.randint(2, 4)):
            sid = next_id("sav", state.saved)
            state.saved[sid] = SavedPlace(
                id=sid, placeId=place.id, label=vocab.title(rng), note=vocab.sentence(rng)
            )
        for _ in range(rng.randint(2, 4)):
            a, b = rng.sample(places, 2)
            route = _route(state, a, b, rng.choice(tuple(SPEEDS_KMH)), vocab.date(rng))
            state.routes[route.id] = route
        return state

    def _place(self, place_id: str) -> Place:
        place = self.state.places.get(place_id)
        if place is None:
            raise not_found("place", place_id)
        return place

    @tool(writes=False)
    def search_places(self, args: SearchPlacesArgs) -> dict:
        """Search places by text, optionally only in one city or of one category."""
        q = args.query.strip().lower()
        found = [
            p
            for p in self.state.places.values()
            if q in f"{p.name} {p.address} {p.city} {p.code}".lower()
            and (not args.city or p.city.lower() == args.city.strip().lower())
            and (not args.category or p.category == args.category)
        ]
        return {"places": [dump(p) for p in found]}

    @tool(writes=False)
    def get_place(self, args: PlaceIdArgs) -> dict:
        """Get one place by id."""
        return {"place": dump(self._place(args.placeId))}

    @tool(writes=True)
    def add_place(self, args: AddPlaceArgs) -> dict:
        """Add a new place to the map; its coordinates are derived from the city."""
        if args.city.strip().lower() not in CITY_INFO:
            raise not_found("city", args.city)
        if args.category not in CATEGORIES:
            raise bad_request(f"category must be one of {', '.join(CATEGORIES)}")
        if not args.name.strip():
            raise bad_request("name must not be empty")
        rng = random.Random(f"{args.name}|{args.city}")
        place = _make_place(self.state, rng, **args.model_dump())
        return {"place": dump(place)}

    @tool(writes=False)
    def geocode(self, args: GeocodeArgs) -> dict:
        """Turn a place name, address or city name into coordinates."""
        q = args.query.strip().lower()
        if not q:
            raise bad_request("query must not be empty")
        for p in self.state.places.values():
            if q in (p.name.lower(), p.address.lower()):
                return {"latitude": p.latitude, "longitude": p.longitude, "city": p.city, "placeId": p.id}
        info = CITY_INFO.get(q)
        if info is None:
            raise not_found("location", args.query)
        return {"latitude": info[2], "longitude": info[3], "city": info[0], "country": info[1]}

    @tool(writes=False)
    def reverse_geocode(self, args: ReverseGeocodeArgs) -> dict:
        """Find the nearest city and nearest known place to a pair of coordinates."""
        if not (-90 <= args.latitude <= 90 and -180 <= args.longitude <= 180):
            raise bad_request("latitude must be within -90..90 and longitude within -180..180")
        city = min(vocab.CITIES, key=lambda c: haversine_km(args.latitude, args.longitude, c[2], c[3]))
        result = {"city": city[0], "country": city[1], "nearestPlace": None}
        if self.state.places:
            near = min(
                self.state.places.values(),
                key=lambda p: haversine_km(args.latitude, args.longitude, p.latitude, p.longitude),
            )
            km = haversine_km(args.latitude, args.longitude, near.latitude, near.longitude)
            result["nearestPlace"] = {**dump(near), "distanceKm": km}
        return result

    @tool(writes=False)
    def compute_distance(self, args: DistanceArgs) -> dict:
        """Compute the straight-line distance in kilometres between two places."""
        a, b = self._place(args.fromPlaceId), self._place(args.toPlaceId)
        return {"distanceKm": haversine_km(a.latitude, a.longitude, b.latitude, b.longitude)}

    def _directions(self, args: DirectionsArgs, day: str = "") -> Route:
        origin, dest = self._place(args.originPlaceId), self._place(args.destinationPlaceId)
        if args.mode not in SPEEDS_KMH:
            raise bad_request("mode must be walking, cycling, transit or driving")
        if origin.id == dest.id:
            raise bad_request("origin and destination must differ")
        return _route(self.state, origin, dest, args.mode, day)

    @tool(writes=False)
    def get_directions(self, args: DirectionsArgs) -> dict:
        """Get the distance and travel time between two places for a travel mode (not saved)."""
        route = self._directions(args)
        return {"distanceKm": route.distanceKm, "durationMin": route.durationMin, "mode": route.mode}

    @tool(writes=True)
    def save_route(self, args: SaveRouteArgs) -> dict:
        """Plan and save a route between two places for a travel day."""
        route = self._directions(args, args.date)
        if len(args.date) != 10 or args.date[4] != "-" or args.date[7] != "-":
            raise bad_request("date must be YYYY-MM-DD")
        self.state.routes[route.id] = route
        return {"route": dump(route)}

    @tool(writes=False)
    def list_routes(self, args: ListRoutesArgs) -> dict:
        """List saved routes, optionally only those for one day."""
        found = [r for r in self.state.routes.values() if not args.date or r.date == args.date]
        return {"routes": [dump(r) for r in found]}

    @tool(writes=True)
    def delete_route(self, args: RouteIdArgs) -> dict:
        """Delete a saved route."""
        if args.routeId not in self.state.routes:
            raise not_found("route", args.routeId)
        del self.state.routes[args.routeId]
        return {"deleted": args.routeId}

    @tool(writes=True)
    def save_place(self, args: SavePlaceArgs) -> dict:
        """Save a place under a label; labels are unique."""
        self._place(args.placeId)
        if not args.label.strip():
            raise bad_request("label must not be empty")
        if any(s.label.lower() == args.label.lower() for s in self.state.saved.values()):
            raise conflict(f"a saved place labelled '{args.label}' already exists")
        sid = next_id("sav", self.state.saved)
        saved = SavedPlace(id=sid, **args.model_dump())
        self.state.saved[sid] = saved
        return {"saved": dump(saved)}

    @tool(writes=False)
    def list_saved_places(self, args: ListSavedArgs) -> dict:
        """List saved places with their place details, optionally filtered by label or note text."""
        q = (args.query or "").strip().lower()
        found = [s for s in self.state.saved.values() if q in f"{s.label} {s.note}".lower()]
        places = self.state.places
        return {
            "saved": [
                {**dump(s), "place": dump(places[s.placeId]) if s.placeId in places else None} for s in found
            ]
        }

    @tool(writes=True)
    def remove_saved_place(self, args: SavedIdArgs) -> dict:
        """Remove a place from the saved places."""
        if args.savedId not in self.state.saved:
            raise not_found("saved place", args.savedId)
        del self.state.saved[args.savedId]
        return {"deleted": args.savedId}

    @classmethod
    def example_arguments(cls, state: MapsState) -> dict[str, dict]:
        a, b = list(state.places.values())[:2]
        saved = next(iter(state.saved.values()))
        route = next(iter(state.routes.values()))
        return {
            "search_places": {"query": a.name.split()[0], "city": a.city},
            "get_place": {"placeId": a.id},
            "add_place": {"name": "Harbor View Cafe", "city": "Lisbon", "category": "cafe"},
            "geocode": {"query": a.city},
            "reverse_geocode": {"latitude": a.latitude, "longitude": a.longitude},
            "compute_distance": {"fromPlaceId": a.id, "toPlaceId": b.id},
            "get_directions": {"originPlaceId": a.id, "destinationPlaceId": b.id, "mode": "walking"},
            "save_route": {"originPlaceId": a.id, "destinationPlaceId": b.id, "date": "2026-04-10"},
            "list_routes": {"date": route.date},
            "delete_route": {"routeId": route.id},
            "save_place": {"placeId": b.id, "label": "Weekend spot", "note": "try it"},
            "list_saved_places": {"query": saved.label.split()[0]},
            "remove_saved_place": {"savedId": saved.id},
        }

    @classmethod
    def links(cls) -> list[Link[MapsState]]:
        return [
            Hop(
                "saved_place_city",
                "title",
                "city",
                _plant_saved_city,
                relation="the city of the place saved under the label {of}",
            ),
            Hop(
                "place_code_city",
                "code",
                "city",
                _plant_code_city,
                relation="the city of the place with the place code {of}",
            ),
            Hop(
                "city_landmark_code",
                "city",
                "code",
                _plant_city_code,
                relation="the place code of the landmark in {of}",
            ),
            Hop(
                "route_destination_on_date",
                "date",
                "city",
                _plant_route_city,
                relation="the destination city of the route saved for {of}",
            ),
            Action("add_place_in_city", "city", _plant_add_place),
            Action("save_place_with_label", "title", _plant_save_place),
            Action("save_route_on_date", "date", _plant_save_route),
            Action("save_route_by_walking_time", "city", _plant_route_by_walk),
            Action("save_place_at_address", "person", _plant_save_at_address),
            Action("save_nearer_place", "title", _plant_save_nearer),
            Action("remove_saved_place_by_note", "person", _plant_remove_saved),
            Action("delete_route_on_date", "date", _plant_delete_route),
            Action("save_place_nearest_centre", "city", _plant_save_central),
        ]


def _drop(collection: dict, value: str, *fields: str) -> None:
    """Make a lookup unambiguous: remove records whose `fields` already mention `value`."""
    low = value.lower()
    for rid in [r.id for r in collection.values() if any(low in str(getattr(r, f)).lower() for f in fields)]:
        del collection[rid]


def _unique_place(state: MapsState, rng: random.Random, **fields) -> Place:
    name = f"{rng.choice(vocab.WORDS).capitalize()} {rng.choice(('Bistro', 'Gallery', 'Pier', 'Hall'))}"
    name = f"{name} {rng.randint(10, 99)}"
    _drop(state.places, name, "name", "address", "city", "code")
    return _make_place(state, rng, name=name, **fields)


def _plant_saved_city(state: MapsState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.saved, value, "label", "note")
    place = _make_place(state, rng)
    sid = next_id("sav", state.saved)
    state.saved[sid] = SavedPlace(id=sid, placeId=place.id, label=value)
    call = PlannedCall(
        "list_saved_places",
        {"query": value},
        inputs={"query": "{value}"},
        reveals=("saved", 0, "place", "city"),
    )
    phrase = "find the place saved in maps under that title and note the city it is in"
    return HopPlan([call], place.city, phrase)


def _plant_code_city(state: MapsState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.places, value, "name", "address", "city", "code")
    place = _make_place(state, rng, code=value)
    return query_hop(
        "search_places",
        value,
        ("places", 0, "city"),
        place.city,
        "search maps for the place with that reference code and note its city",
    )


def _plant_city_code(state: MapsState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.places, value, "city")
    place = _make_place(state, rng, city=value, category="landmark")
    call = PlannedCall(
        "search_places",
        {"city": value, "category": "landmark"},
        inputs={"city": "{value}"},
        reveals=("places", 0, "code"),
    )
    phrase = "search maps for the landmark in that city and note its place code"
    return HopPlan([call], place.code, phrase)


def _plant_route_city(state: MapsState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.routes, value, "date")
    origin = _make_place(state, rng)
    dest = _make_place(state, rng)
    route = _route(state, origin, dest, "driving", value)
    state.routes[route.id] = route
    call = PlannedCall(
        "list_routes", {"date": value}, inputs={"date": "{value}"}, reveals=("routes", 0, "destinationCity")
    )
    phrase = "check the route saved in maps for that date and note the city of its destination"
    return HopPlan([call], dest.city, phrase)


def _plant_add_place(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    name = f"{rng.choice(vocab.WORDS).capitalize()} Corner {rng.randint(100, 999)}"
    _drop(state.places, name, "name")
    address = f"{rng.randint(1, 99)} Market Lane"
    call = PlannedCall(
        "add_place",
        {"name": name, "city": value, "category": "restaurant", "address": address},
        inputs={"city": "{value}"},
    )
    crit = expect_record("places", f"a restaurant '{name}' exists in {value}", name=name, city=value)
    phrase = f"add a restaurant named '{name}' at '{address}' in that city to the map"
    return ActionPlan([call], [crit], phrase)


def _plant_save_place(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.saved, value, "label")
    place = _unique_place(state, rng)
    calls = [
        PlannedCall("search_places", {"query": place.name}),
        PlannedCall(
            "save_place",
            {"placeId": None, "label": value},
            inputs={"label": "{value}"},
            bind={"placeId": (0, ("places", 0, "id"))},
        ),
    ]
    crit = expect_record("saved", f"'{place.name}' is saved as '{value}'", placeId=place.id, label=value)
    return ActionPlan(calls, [crit], f"save the place '{place.name}' in maps with that title as its label")


def _plant_save_route(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    origin = _unique_place(state, rng)
    dest = _unique_place(state, rng)
    calls = [
        PlannedCall("search_places", {"query": origin.name}),
        PlannedCall("search_places", {"query": dest.name}),
        PlannedCall(
            "save_route",
            {"originPlaceId": None, "destinationPlaceId": None, "mode": "transit", "date": value},
            inputs={"date": "{value}"},
            bind={"originPlaceId": (0, ("places", 0, "id")), "destinationPlaceId": (1, ("places", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "routes",
        f"a transit route from '{origin.name}' to '{dest.name}' is saved for {value}",
        originPlaceId=origin.id,
        destinationPlaceId=dest.id,
        mode="transit",
        date=value,
    )
    phrase = f"save a transit route in maps from '{origin.name}' to '{dest.name}' for that date"
    return ActionPlan(calls, [crit], phrase)


_NOUNS = {"station": "Station", "museum": "Museum", "cafe": "Cafe", "landmark": "Monument"}


def _fresh_place(state: MapsState, rng: random.Random, **fields) -> Place:
    """A place whose name no other place's name, address, city or code contains (none is removed)."""
    for _ in range(100):
        noun = _NOUNS.get(fields.get("category", ""), "Hall")
        name = f"{rng.choice(vocab.WORDS).capitalize()} {noun} {rng.randint(10, 99)}"
        low = name.lower()
        if not any(low in f"{p.name} {p.address} {p.city} {p.code}".lower() for p in state.places.values()):
            return _make_place(state, rng, name=name, **fields)
    raise ValueError("no fresh place name")


def _offset(place: Place, origin: Place, km: float, rng: random.Random) -> None:
    """Move `place` to about `km` kilometres from `origin` (north-east or south-west of it)."""
    step = km / 111.0 / math.sqrt(2)
    sign = rng.choice((1, -1))
    place.latitude = round(origin.latitude + sign * step, 5)
    place.longitude = round(
        origin.longitude + sign * step / max(0.2, math.cos(math.radians(origin.latitude))), 5
    )


def _plant_route_by_walk(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    for pid in [
        p.id
        for p in state.places.values()
        if p.city.lower() == value.lower() and p.category in ("station", "museum")
    ]:
        del state.places[pid]
    origin = _fresh_place(state, rng, city=value, category="station")
    dest = _fresh_place(state, rng, city=value, category="museum")
    _offset(dest, origin, rng.choice((rng.uniform(0.8, 1.6), rng.uniform(3.5, 5.0))), rng)
    km = haversine_km(origin.latitude, origin.longitude, dest.latitude, dest.longitude)
    mode = "walking" if km / SPEEDS_KMH["walking"] * 60 <= 30 else "transit"
    day = vocab.date(rng)
    ids = {"originPlaceId": (0, ("places", 0, "id")), "destinationPlaceId": (1, ("places", 0, "id"))}
    calls = [
        PlannedCall("search_places", {"city": value, "category": "station"}, inputs={"city": "{value}"}),
        PlannedCall("search_places", {"city": value, "category": "museum"}, inputs={"city": "{value}"}),
        PlannedCall(
            "get_directions", {"originPlaceId": None, "destinationPlaceId": None, "mode": "walking"}, bind=ids
        ),
        PlannedCall(
            "save_route",
            {"originPlaceId": None, "destinationPlaceId": None, "mode": mode, "date": day},
            bind=ids,
        ),
    ]
    crit = expect_record(
        "routes",
        f"a {mode} route from the station to the museum in {value} is saved for {day}",
        originPlaceId=origin.id,
        destinationPlaceId=dest.id,
        mode=mode,
        date=day,
    )
    phrase = (
        f"save a route for {day} from the station to the museum in that city: walking if the walk "
        "takes at most 30 minutes, otherwise transit"
    )
    return ActionPlan(calls, [crit], phrase)


def _plant_save_at_address(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    address = f"{rng.randint(100, 999)} {rng.choice(vocab.WORDS).capitalize()} Avenue"
    _drop(state.places, address, "name", "address")
    place = _fresh_place(state, rng, address=address)
    label = f"Meeting point {vocab.code(rng, 'MP')}"
    _drop(state.saved, label, "label")
    _drop(state.saved, value, "label", "note")
    calls = [
        PlannedCall("geocode", {"query": address}),
        PlannedCall(
            "save_place",
            {"placeId": None, "label": label, "note": value},
            inputs={"note": "{value}"},
            bind={"placeId": (0, ("placeId",))},
        ),
    ]
    crit = expect_record(
        "saved",
        f"the place at '{address}' is saved as '{label}' with the note {value}",
        placeId=place.id,
        label=label,
        note=value,
    )
    phrase = f"save the place at '{address}' under the label '{label}', with that person's name as its note"
    return ActionPlan(calls, [crit], phrase)


def _plant_save_nearer(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.saved, value, "label")
    city = vocab.city(rng)[0]
    hub = _fresh_place(state, rng, city=city, category="landmark")
    near = _fresh_place(state, rng, city=city, category="cafe")
    far = _fresh_place(state, rng, city=city, category="cafe")
    _offset(near, hub, rng.uniform(0.5, 1.5), rng)
    _offset(far, hub, rng.uniform(2.5, 4.0), rng)
    first, second = (near, far) if rng.random() < 0.5 else (far, near)
    at = 1 if first is near else 2
    calls = [
        PlannedCall("search_places", {"query": hub.name}),
        PlannedCall("search_places", {"query": first.name}),
        PlannedCall("search_places", {"query": second.name}),
        PlannedCall(
            "compute_distance",
            {"fromPlaceId": None, "toPlaceId": None},
            bind={"fromPlaceId": (0, ("places", 0, "id")), "toPlaceId": (1, ("places", 0, "id"))},
        ),
        PlannedCall(
            "compute_distance",
            {"fromPlaceId": None, "toPlaceId": None},
            bind={"fromPlaceId": (0, ("places", 0, "id")), "toPlaceId": (2, ("places", 0, "id"))},
        ),
        PlannedCall(
            "save_place",
            {"placeId": None, "label": value},
            inputs={"label": "{value}"},
            bind={"placeId": (at, ("places", 0, "id"))},
        ),
    ]
    crit = expect_record("saved", f"'{near.name}' is saved as '{value}'", placeId=near.id, label=value)
    phrase = (
        f"of '{first.name}' and '{second.name}', save the one closer to '{hub.name}' "
        "with that title as its label"
    )
    return ActionPlan(calls, [crit], phrase)


def _plant_remove_saved(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.saved, value, "label", "note")
    place = _make_place(state, rng)
    label = f"{rng.choice(vocab.WORDS).capitalize()} spot {rng.randint(10, 99)}"
    _drop(state.saved, label, "label", "note")
    sid = next_id("sav", state.saved)
    state.saved[sid] = SavedPlace(id=sid, placeId=place.id, label=label, note=f"Recommended by {value}")
    calls = [
        PlannedCall("list_saved_places", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("remove_saved_place", {"savedId": None}, bind={"savedId": (0, ("saved", 0, "id"))}),
    ]
    crit = expect_record("saved", f"the saved place '{label}' is removed", absent=True, id=sid, label=label)
    return ActionPlan(calls, [crit], "remove the saved place whose note says that person recommended it")


def _plant_delete_route(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.routes, value, "date")
    origin = _make_place(state, rng)
    dest = _make_place(state, rng)
    route = _route(state, origin, dest, rng.choice(tuple(SPEEDS_KMH)), value)
    state.routes[route.id] = route
    calls = [
        PlannedCall("list_routes", {"date": value}, inputs={"date": "{value}"}),
        PlannedCall("delete_route", {"routeId": None}, bind={"routeId": (0, ("routes", 0, "id"))}),
    ]
    crit = expect_record(
        "routes", f"the route saved for {value} is deleted", absent=True, id=route.id, date=value
    )
    return ActionPlan(calls, [crit], "delete the route saved in maps for that date")


def _plant_save_central(state: MapsState, rng: random.Random, value: str) -> ActionPlan:
    _, _, lat, lon = CITY_INFO[value.strip().lower()]
    _drop(state.places, value, "name", "address")
    central = _fresh_place(state, rng, city=value)
    central.latitude, central.longitude = lat, lon
    _fresh_place(state, rng, city=value)  # a second place in the city, farther from its centre
    label = f"Central spot {vocab.code(rng, 'CS')}"
    _drop(state.saved, label, "label")
    calls = [
        PlannedCall("geocode", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "reverse_geocode",
            {"latitude": None, "longitude": None},
            bind={"latitude": (0, ("latitude",)), "longitude": (0, ("longitude",))},
        ),
        PlannedCall(
            "save_place",
            {"placeId": None, "label": label},
            bind={"placeId": (1, ("nearestPlace", "id"))},
        ),
    ]
    crit = expect_record(
        "saved",
        f"the place nearest the centre of {value} is saved as '{label}'",
        placeId=central.id,
        label=label,
    )
    phrase = f"find the known place nearest to the centre of that city and save it under the label '{label}'"
    return ActionPlan(calls, [crit], phrase)


register_service(MapsService)

"""Weather service: deterministic forecasts per city and day, advisories and alert subscriptions."""

from __future__ import annotations

import datetime as dt
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
from envpipeline.services.links import Action, ActionPlan, Hop, HopPlan, Link, PlannedCall, expect_record
from envpipeline.services.registry import register_service

SEVERITIES = ("advisory", "watch", "warning")
HAZARDS = ("Heat", "Flood", "Wind", "Frost", "Storm", "Fog", "Snow")
CITY_INFO = {c[0].lower(): c for c in vocab.CITIES}


class Location(Record):
    id: str
    city: str
    country: str
    latitude: float
    longitude: float
    label: str = ""


class Advisory(Record):
    id: str
    code: str
    city: str
    date: str
    severity: str
    headline: str
    condition: str = ""
    status: str = "active"


class Subscription(Record):
    id: str
    email: str
    city: str
    minSeverity: str = "advisory"
    active: bool = True


class WeatherState(Strict):
    locations: dict[str, Location] = {}
    advisories: dict[str, Advisory] = {}
    subscriptions: dict[str, Subscription] = {}


class NoArgs(ToolArgs):
    country: Annotated[str | None, Field(description="only locations in this country")] = None


class AddLocationArgs(ToolArgs):
    city: Annotated[str, Field(description="city name, e.g. Lisbon")]
    label: Annotated[str, Field(description="optional label such as 'home' or 'office'")] = ""


class LocationIdArgs(ToolArgs):
    locationId: Annotated[str, Field(description="tracked location id")]


class ForecastArgs(ToolArgs):
    city: Annotated[str, Field(description="city name")]
    date: Annotated[str, Field(description="day of the forecast (YYYY-MM-DD)")]


class DailyForecastArgs(ToolArgs):
    city: Annotated[str, Field(description="city name")]
    startDate: Annotated[str, Field(description="first day (YYYY-MM-DD)")]
    days: Annotated[int, Field(description="number of days, 1 to 7", ge=1, le=7)] = 3


class ListAdvisoriesArgs(ToolArgs):
    city: Annotated[str | None, Field(description="only advisories for this city")] = None
    date: Annotated[str | None, Field(description="only advisories for this day (YYYY-MM-DD)")] = None
    status: Annotated[str | None, Field(description="active or cancelled")] = None


class AdvisoryIdArgs(ToolArgs):
    advisoryId: Annotated[str, Field(description="advisory id")]


class AdvisoryCodeArgs(ToolArgs):
    code: Annotated[str, Field(description="advisory reference code, e.g. WX-1234")]


class IssueAdvisoryArgs(ToolArgs):
    city: Annotated[str, Field(description="city the advisory applies to")]
    date: Annotated[str, Field(description="day it applies to (YYYY-MM-DD)")]
    severity: Annotated[str, Field(description="advisory, watch or warning")]
    headline: Annotated[str, Field(description="short headline")]
    condition: Annotated[str, Field(description="expected condition, e.g. rain or snow")] = ""


class ListSubscriptionsArgs(ToolArgs):
    email: Annotated[str | None, Field(description="only subscriptions of this email address")] = None
    city: Annotated[str | None, Field(description="only subscriptions for this city")] = None


class SubscribeArgs(ToolArgs):
    email: Annotated[str, Field(description="email address that receives the alerts")]
    city: Annotated[str, Field(description="city to watch")]
    minSeverity: Annotated[str, Field(description="lowest severity sent: advisory, watch or warning")] = (
        "advisory"
    )


class SubscriptionIdArgs(ToolArgs):
    subscriptionId: Annotated[str, Field(description="subscription id")]


def _city(name: str) -> tuple[str, str, float, float]:
    info = CITY_INFO.get(name.strip().lower())
    if info is None:
        raise not_found("city", name)
    return info


def _day(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise bad_request(f"invalid date '{value}', expected YYYY-MM-DD") from None


def _severity(value: str) -> str:
    if value not in SEVERITIES:
        raise bad_request("severity must be advisory, watch or warning")
    return value


def forecast_for(name: str, day: dt.date) -> dict:
    """The deterministic forecast of one city on one day (same inputs, same forecast)."""
    city, country, lat, _ = _city(name)
    r = random.Random(f"{city}|{day.isoformat()}")
    summer = day.month in (6, 7, 8) if lat >= 0 else day.month in (12, 1, 2)
    winter = day.month in (12, 1, 2) if lat >= 0 else day.month in (6, 7, 8)
    base = 30 - abs(lat) * 0.4 + (6 if summer else -6 if winter else 0)
    high = round(base + r.uniform(-4, 4))
    condition = r.choice(vocab.WEATHER)
    if condition == "snow" and high > 4:
        condition = "rain"
    wet = condition in ("rain", "snow", "thunderstorm")
    return {
        "city": city,
        "country": country,
        "date": day.isoformat(),
        "condition": condition,
        "highC": high,
        "lowC": high - r.randint(4, 10),
        "precipitationChance": r.randint(60, 95) if wet else r.randint(0, 30),
        "windKph": r.randint(3, 60 if condition == "windy" else 25),
    }


class WeatherService(Service[WeatherState]):
    name = "weather"
    title = "Weather"
    domain = "information"

    @classmethod
    def generate_state(cls, rng: random.Random) -> WeatherState:
        state = WeatherState()
        cities = rng.sample(vocab.CITIES, 8)
        for city, country, lat, lon in cities[: rng.randint(4, 6)]:
            lid = next_id("loc", state.locations)
            label = rng.choice(("", "home", "office", "trip"))
            state.locations[lid] = Location(
                id=lid, city=city, country=country, latitude=lat, longitude=lon, label=label
            )
        codes: set[str] = set()
        for _ in range(rng.randint(4, 7)):
            aid = next_id("adv", state.advisories)
            state.advisories[aid] = Advisory(
                id=aid,
                code=vocab.unique(rng, vocab.code, codes, "WX"),
                city=rng.choice(cities)[0],
                date=vocab.date(rng),
                severity=rng.choice(SEVERITIES),
                headline=f"{rng.choice(HAZARDS)} {rng.choice(SEVERITIES)} in effect",
                condition=rng.choice(vocab.WEATHER),
            )
        for _ in range(rng.randint(4, 6)):
            sid = next_id("sub", state.subscriptions)
            state.subscriptions[sid] = Subscription(
                id=sid,
                email=vocab.email_for(vocab.person_name(rng), rng),
                city=rng.choice(cities)[0],
                minSeverity=rng.choice(SEVERITIES),
            )
        return state

    def _advisory(self, advisory_id: str) -> Advisory:
        advisory = self.state.advisories.get(advisory_id)
        if advisory is None:
            raise not_found("advisory", advisory_id)
        return advisory

    @tool(writes=False)
    def list_locations(self, args: NoArgs) -> dict:
        """List the tracked locations, optionally only those in one country."""
        found = [
            loc
            for loc in self.state.locations.values()
            if not args.country or loc.country.lower() == args.country.lower()
        ]
        return {"locations": [dump(loc) for loc in found]}

    @tool(writes=True)
    def add_location(self, args: AddLocationArgs) -> dict:
        """Start tracking a city's weather."""
        city, country, lat, lon = _city(args.city)
        if any(loc.city == city for loc in self.state.locations.values()):
            raise conflict(f"{city} is already tracked")
        lid = next_id("loc", self.state.locations)
        loc = Location(id=lid, city=city, country=country, latitude=lat, longitude=lon, label=args.label)
        self.state.locations[lid] = loc
        return {"location": dump(loc)}

    @tool(writes=True)
    def remove_location(self, args: LocationIdArgs) -> dict:
        """Stop tracking a location."""
        if args.locationId not in self.state.locations:
            raise not_found("location", args.locationId)
        del self.state.locations[args.locationId]
        return {"deleted": args.locationId}

    @tool(writes=False)
    def get_forecast(self, args: ForecastArgs) -> dict:
        """Get the forecast of a city on one day, with any active advisories for that day."""
        forecast = forecast_for(args.city, _day(args.date))
        forecast["advisories"] = [
            a.code
            for a in self.state.advisories.values()
            if a.city == forecast["city"] and a.date == forecast["date"] and a.status == "active"
        ]
        return {"forecast": forecast}

    @tool(writes=False)
    def get_daily_forecasts(self, args: DailyForecastArgs) -> dict:
        """Get a city's forecast for several consecutive days (at most 7)."""
        start = _day(args.startDate)
        days = [forecast_for(args.city, start + dt.timedelta(days=i)) for i in range(args.days)]
        return {"forecasts": days}

    @tool(writes=False)
    def list_advisories(self, args: ListAdvisoriesArgs) -> dict:
        """List weather advisories, optionally filtered by city, day and status."""
        found = [
            a
            for a in self.state.advisories.values()
            if (not args.city or a.city.lower() == args.city.strip().lower())
            and (not args.date or a.date == args.date)
            and (not args.status or a.status == args.status)
        ]
        return {"advisories": [dump(a) for a in found]}

    @tool(writes=False)
    def get_advisory(self, args: AdvisoryIdArgs) -> dict:
        """Get one advisory by id."""
        return {"advisory": dump(self._advisory(args.advisoryId))}

    @tool(writes=False)
    def find_advisory_by_code(self, args: AdvisoryCodeArgs) -> dict:
        """Find an advisory by its reference code."""
        for a in self.state.advisories.values():
            if a.code.lower() == args.code.strip().lower():
                return {"advisory": dump(a)}
        raise not_found("advisory code", args.code)

    @tool(writes=True)
    def issue_advisory(self, args: IssueAdvisoryArgs) -> dict:
        """Issue a weather advisory for a city and day."""
        city = _city(args.city)[0]
        _day(args.date)
        _severity(args.severity)
        if not args.headline.strip():
            raise bad_request("headline must not be empty")
        if args.condition and args.condition not in vocab.WEATHER:
            raise bad_request(f"condition must be one of {', '.join(vocab.WEATHER)}")
        codes = {a.code for a in self.state.advisories.values()}
        n = len(self.state.advisories) + 1
        while f"WX-{9000 + n}" in codes:
            n += 1
        aid = next_id("adv", self.state.advisories)
        advisory = Advisory(id=aid, code=f"WX-{9000 + n}", **{**args.model_dump(), "city": city})
        self.state.advisories[aid] = advisory
        return {"advisory": dump(advisory)}

    @tool(writes=True)
    def cancel_advisory(self, args: AdvisoryIdArgs) -> dict:
        """Cancel an active advisory."""
        advisory = self._advisory(args.advisoryId)
        if advisory.status == "cancelled":
            raise conflict(f"advisory {advisory.code} is already cancelled")
        advisory.status = "cancelled"
        return {"advisory": dump(advisory)}

    @tool(writes=False)
    def list_subscriptions(self, args: ListSubscriptionsArgs) -> dict:
        """List alert subscriptions, optionally by email address or city."""
        found = [
            s
            for s in self.state.subscriptions.values()
            if (not args.email or s.email.lower() == args.email.strip().lower())
            and (not args.city or s.city.lower() == args.city.strip().lower())
        ]
        return {"subscriptions": [dump(s) for s in found]}

    @tool(writes=True)
    def subscribe_alerts(self, args: SubscribeArgs) -> dict:
        """Subscribe an email address to weather alerts for a city."""
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        city = _city(args.city)[0]
        _severity(args.minSeverity)
        for s in self.state.subscriptions.values():
            if s.email == args.email and s.city == city and s.active:
                raise conflict(f"{args.email} is already subscribed to {city}")
        sid = next_id("sub", self.state.subscriptions)
        sub = Subscription(id=sid, email=args.email, city=city, minSeverity=args.minSeverity)
        self.state.subscriptions[sid] = sub
        return {"subscription": dump(sub)}

    @tool(writes=True)
    def unsubscribe_alerts(self, args: SubscriptionIdArgs) -> dict:
        """Delete an alert subscription."""
        if args.subscriptionId not in self.state.subscriptions:
            raise not_found("subscription", args.subscriptionId)
        del self.state.subscriptions[args.subscriptionId]
        return {"deleted": args.subscriptionId}

    @classmethod
    def example_arguments(cls, state: WeatherState) -> dict[str, dict]:
        loc = next(iter(state.locations.values()))
        adv = next(iter(state.advisories.values()))
        sub = next(iter(state.subscriptions.values()))
        tracked = {x.city for x in state.locations.values()}
        new_city = next(c[0] for c in vocab.CITIES if c[0] not in tracked)
        return {
            "list_locations": {"country": loc.country},
            "add_location": {"city": new_city, "label": "trip"},
            "remove_location": {"locationId": loc.id},
            "get_forecast": {"city": loc.city, "date": "2026-05-04"},
            "get_daily_forecasts": {"city": loc.city, "startDate": "2026-05-04", "days": 5},
            "list_advisories": {"city": adv.city},
            "get_advisory": {"advisoryId": adv.id},
            "find_advisory_by_code": {"code": adv.code},
            "issue_advisory": {
                "city": loc.city,
                "date": "2026-07-01",
                "severity": "watch",
                "headline": "Heat watch",
            },
            "cancel_advisory": {"advisoryId": adv.id},
            "list_subscriptions": {"email": sub.email},
            "subscribe_alerts": {"email": "new.person@example.com", "city": loc.city},
            "unsubscribe_alerts": {"subscriptionId": sub.id},
        }

    @classmethod
    def links(cls) -> list[Link[WeatherState]]:
        return [
            Hop(
                "advisory_date_for_city",
                "city",
                "date",
                _plant_city_date,
                relation="the date of the weather advisory for {of}",
            ),
            Hop(
                "advisory_city_for_code",
                "advisory_code",
                "city",
                _plant_code_city,
                relation="the city covered by weather advisory {of}",
            ),
            Hop(
                "subscriber_city",
                "email",
                "city",
                _plant_email_city,
                relation="the city watched by the weather alert subscription of {of}",
            ),
            Hop(
                "advisory_code_on_date",
                "date",
                "advisory_code",
                _plant_date_code,
                relation="the code of the weather advisory issued for {of}",
            ),
            Action("subscribe_email_alerts", "email", _plant_subscribe),
            Action("issue_city_advisory", "city", _plant_issue),
            Action("cancel_advisory_by_code", "advisory_code", _plant_cancel),
            Action("track_city", "city", _plant_track),
            Action("stop_tracking_city", "city", _plant_untrack),
            Action("unsubscribe_email_alerts", "email", _plant_unsubscribe),
            Action("cancel_advisory_on_date", "date", _plant_cancel_on_date),
            Action("advisory_from_forecast", "date", _plant_forecast_advisory),
            Action("watch_on_hottest_day", "city", _plant_hottest_watch),
        ]


def _drop(collection: dict, value: str, *fields: str) -> None:
    """Make a lookup unambiguous: remove records whose `fields` already mention `value`."""
    low = value.lower()
    for rid in [r.id for r in collection.values() if any(low in str(getattr(r, f)).lower() for f in fields)]:
        del collection[rid]


def _plant_advisory(state: WeatherState, rng: random.Random, **fields) -> Advisory:
    codes = {a.code for a in state.advisories.values()}
    fields.setdefault("code", vocab.unique(rng, vocab.code, codes, "WX"))
    fields.setdefault("city", vocab.city(rng)[0])
    fields.setdefault("date", vocab.date(rng))
    aid = next_id("adv", state.advisories)
    advisory = Advisory(
        id=aid, severity="warning", headline=f"{rng.choice(HAZARDS)} warning in effect", **fields
    )
    state.advisories[aid] = advisory
    return advisory


def _plant_city_date(state: WeatherState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.advisories, value, "city")
    advisory = _plant_advisory(state, rng, city=value)
    call = PlannedCall(
        "list_advisories", {"city": value}, inputs={"city": "{value}"}, reveals=("advisories", 0, "date")
    )
    phrase = "check the weather advisories for that city and note the date the advisory applies to"
    return HopPlan([call], advisory.date, phrase)


def _plant_code_city(state: WeatherState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.advisories, value, "code")
    advisory = _plant_advisory(state, rng, code=value)
    call = PlannedCall(
        "find_advisory_by_code", {"code": value}, inputs={"code": "{value}"}, reveals=("advisory", "city")
    )
    phrase = "look up the weather advisory with that advisory code and note the city it covers"
    return HopPlan([call], advisory.city, phrase)


def _plant_email_city(state: WeatherState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.subscriptions, value, "email")
    place = vocab.city(rng)[0]
    sid = next_id("sub", state.subscriptions)
    state.subscriptions[sid] = Subscription(id=sid, email=value, city=place, minSeverity="watch")
    call = PlannedCall(
        "list_subscriptions",
        {"email": value},
        inputs={"email": "{value}"},
        reveals=("subscriptions", 0, "city"),
    )
    phrase = "find the weather alert subscription of that email address and note the city it watches"
    return HopPlan([call], place, phrase)


def _plant_date_code(state: WeatherState, rng: random.Random, value: str) -> HopPlan:
    _drop(state.advisories, value, "date")
    advisory = _plant_advisory(state, rng, date=value)
    call = PlannedCall(
        "list_advisories", {"date": value}, inputs={"date": "{value}"}, reveals=("advisories", 0, "code")
    )
    phrase = "list the weather advisories issued for that date and note the advisory's reference code"
    return HopPlan([call], advisory.code, phrase)


def _plant_subscribe(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.subscriptions, value, "email")
    place = vocab.city(rng)[0]
    call = PlannedCall(
        "subscribe_alerts",
        {"email": value, "city": place, "minSeverity": "watch"},
        inputs={"email": "{value}"},
    )
    crit = expect_record(
        "subscriptions",
        f"{value} is subscribed to {place} alerts at watch level",
        email=value,
        city=place,
        minSeverity="watch",
        active=True,
    )
    phrase = f"subscribe that email address to weather alerts for {place} at 'watch' severity or above"
    return ActionPlan([call], [crit], phrase)


def _plant_issue(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    day = vocab.date(rng)
    headline = f"{rng.choice(HAZARDS)} Watch {vocab.code(rng, 'HD')}"
    call = PlannedCall(
        "issue_advisory",
        {"city": value, "date": day, "severity": "watch", "headline": headline},
        inputs={"city": "{value}"},
    )
    crit = expect_record(
        "advisories",
        f"a watch '{headline}' is issued for {value} on {day}",
        city=value,
        date=day,
        severity="watch",
        headline=headline,
    )
    phrase = f"issue a 'watch' weather advisory headlined '{headline}' for that city on {day}"
    return ActionPlan([call], [crit], phrase)


def _plant_cancel(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.advisories, value, "code")
    _plant_advisory(state, rng, code=value)
    calls = [
        PlannedCall("find_advisory_by_code", {"code": value}, inputs={"code": "{value}"}),
        PlannedCall("cancel_advisory", {"advisoryId": None}, bind={"advisoryId": (0, ("advisory", "id"))}),
    ]
    crit = expect_record("advisories", f"the advisory {value} is cancelled", code=value, status="cancelled")
    return ActionPlan(calls, [crit], "cancel the weather advisory with that advisory code")


def _plant_track(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.locations, value, "city")
    call = PlannedCall("add_location", {"city": value, "label": "trip"}, inputs={"city": "{value}"})
    crit = expect_record("locations", f"{value} is tracked with the label 'trip'", city=value, label="trip")
    return ActionPlan([call], [crit], "start tracking the weather of that city, labelled 'trip'")


def _plant_untrack(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.locations, value, "city")
    city, country, lat, lon = _city(value)
    lid = next_id("loc", state.locations)
    state.locations[lid] = Location(
        id=lid, city=city, country=country, latitude=lat, longitude=lon, label=rng.choice(("home", "office"))
    )
    calls = [PlannedCall("list_locations", {}), PlannedCall("remove_location", {"locationId": lid})]
    crit = expect_record("locations", f"{value} is no longer tracked", absent=True, id=lid, city=value)
    return ActionPlan(calls, [crit], "stop tracking the weather of that city")


def _plant_unsubscribe(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.subscriptions, value, "email")
    sid = next_id("sub", state.subscriptions)
    sub = Subscription(id=sid, email=value, city=vocab.city(rng)[0], minSeverity=rng.choice(SEVERITIES))
    state.subscriptions[sid] = sub
    calls = [
        PlannedCall("list_subscriptions", {"email": value}, inputs={"email": "{value}"}),
        PlannedCall(
            "unsubscribe_alerts",
            {"subscriptionId": None},
            bind={"subscriptionId": (0, ("subscriptions", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "subscriptions", f"{value} no longer gets {sub.city} alerts", absent=True, id=sid, email=value
    )
    return ActionPlan(calls, [crit], "delete the weather alert subscription of that email address")


def _plant_cancel_on_date(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    _drop(state.advisories, value, "date")
    advisory = _plant_advisory(state, rng, date=value)
    calls = [
        PlannedCall("list_advisories", {"date": value}, inputs={"date": "{value}"}),
        PlannedCall(
            "cancel_advisory", {"advisoryId": None}, bind={"advisoryId": (0, ("advisories", 0, "id"))}
        ),
    ]
    crit = expect_record(
        "advisories",
        f"the advisory {advisory.code} for {value} is cancelled",
        id=advisory.id,
        date=value,
        status="cancelled",
    )
    return ActionPlan(calls, [crit], "cancel the weather advisory issued for that date")


def _plant_forecast_advisory(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    label = rng.choice(("cabin", "studio", "warehouse", "farm"))
    for loc in state.locations.values():
        if loc.label == label:
            loc.label = ""
    tracked = {loc.city for loc in state.locations.values()}
    city, country, lat, lon = rng.choice([c for c in vocab.CITIES if c[0] not in tracked])
    lid = next_id("loc", state.locations)
    state.locations[lid] = Location(
        id=lid, city=city, country=country, latitude=lat, longitude=lon, label=label
    )
    headline = f"Forecast notice {vocab.code(rng, 'FN')}"
    _drop(state.advisories, headline, "headline")
    condition = forecast_for(city, _day(value))["condition"]
    calls = [
        PlannedCall("list_locations", {}),
        PlannedCall("get_forecast", {"city": city, "date": value}, inputs={"date": "{value}"}),
        PlannedCall(
            "issue_advisory",
            {"city": city, "date": value, "severity": "advisory", "headline": headline, "condition": None},
            inputs={"date": "{value}"},
            bind={"condition": (1, ("forecast", "condition"))},
        ),
    ]
    crit = expect_record(
        "advisories",
        f"an advisory '{headline}' for {city} on {value} gives the forecast condition {condition}",
        city=city,
        date=value,
        severity="advisory",
        headline=headline,
        condition=condition,
    )
    phrase = (
        f"check the forecast on that date for the tracked location labelled '{label}' and issue an "
        f"'advisory'-level notice for it on that day headlined '{headline}', with the forecast condition "
        "as its condition"
    )
    return ActionPlan(calls, [crit], phrase)


def _plant_hottest_watch(state: WeatherState, rng: random.Random, value: str) -> ActionPlan:
    start = _day(vocab.date(rng))
    days = [forecast_for(value, start + dt.timedelta(days=i)) for i in range(3)]
    for _ in range(100):  # one hottest day, no tie
        highs = sorted((d["highC"] for d in days), reverse=True)
        if highs[0] > highs[1]:
            break
        start = _day(vocab.date(rng))
        days = [forecast_for(value, start + dt.timedelta(days=i)) for i in range(3)]
    hottest = max(days, key=lambda d: d["highC"])["date"]
    headline = f"Heat watch {vocab.code(rng, 'HW')}"
    _drop(state.advisories, headline, "headline")
    calls = [
        PlannedCall(
            "get_daily_forecasts",
            {"city": value, "startDate": start.isoformat(), "days": 3},
            inputs={"city": "{value}"},
        ),
        PlannedCall(
            "issue_advisory",
            {"city": value, "date": hottest, "severity": "watch", "headline": headline},
            inputs={"city": "{value}"},
        ),
    ]
    crit = expect_record(
        "advisories",
        f"a watch '{headline}' is issued for {value} on its hottest day {hottest}",
        city=value,
        date=hottest,
        severity="watch",
        headline=headline,
    )
    phrase = (
        f"look at the 3-day forecast of that city starting {start.isoformat()} and issue a 'watch' "
        f"advisory headlined '{headline}' for the hottest of those days"
    )
    return ActionPlan(calls, [crit], phrase)


register_service(WeatherService)

"""Flights service (airline booking): flight search, passengers, bookings, seats and cancellations."""

from __future__ import annotations

import random
import re
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

SEAT = re.compile(r"^([1-9]|[1-3][0-9])[A-F]$")
AIRLINES = ("CW", "NR", "SK", "TL", "AZ")


class Flight(Record):
    id: str
    number: str
    origin: str
    destination: str
    date: str
    departs: str
    price: float
    seatsLeft: int


class Passenger(Record):
    id: str
    name: str
    email: str


class Booking(Record):
    id: str
    code: str
    flightId: str
    passengerId: str
    seat: str
    status: str = "confirmed"


class FlightsState(Strict):
    flights: dict[str, Flight] = {}
    passengers: dict[str, Passenger] = {}
    bookings: dict[str, Booking] = {}


class SearchFlightsArgs(ToolArgs):
    origin: Annotated[str | None, Field(description="departure city")] = None
    destination: Annotated[str | None, Field(description="arrival city")] = None
    date: Annotated[str | None, Field(description="departure day (YYYY-MM-DD)")] = None
    flightNumber: Annotated[str | None, Field(description="flight number, e.g. CW482")] = None


class FlightIdArgs(ToolArgs):
    flightId: Annotated[str, Field(description="flight id")]


class ListPassengersArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in passenger name and email")] = None


class PassengerIdArgs(ToolArgs):
    passengerId: Annotated[str, Field(description="passenger id")]


class AddPassengerArgs(ToolArgs):
    name: Annotated[str, Field(description="passenger full name as on the passport")]
    email: Annotated[str, Field(description="passenger email address (unique)")]


class UpdatePassengerArgs(ToolArgs):
    passengerId: Annotated[str, Field(description="passenger id")]
    name: Annotated[str | None, Field(description="new full name")] = None
    email: Annotated[str | None, Field(description="new email address")] = None


class BookFlightArgs(ToolArgs):
    flightId: Annotated[str, Field(description="flight id")]
    passengerId: Annotated[str, Field(description="passenger id")]
    seat: Annotated[str | None, Field(description="seat such as 14C (default: first free seat)")] = None


class GetBookingArgs(ToolArgs):
    confirmationCode: Annotated[str, Field(description="booking confirmation code, e.g. CNF-4821")]


class ListBookingsArgs(ToolArgs):
    passengerId: Annotated[str | None, Field(description="only bookings of this passenger")] = None
    flightId: Annotated[str | None, Field(description="only bookings on this flight")] = None


class BookingIdArgs(ToolArgs):
    bookingId: Annotated[str, Field(description="booking id")]


class ChangeSeatArgs(ToolArgs):
    bookingId: Annotated[str, Field(description="booking id")]
    seat: Annotated[str, Field(description="new seat, row 1-39 and letter A-F, e.g. 14C")]


class ChangeFlightArgs(ToolArgs):
    bookingId: Annotated[str, Field(description="booking id")]
    flightId: Annotated[str, Field(description="id of the new flight")]


class FlightsService(Service[FlightsState]):
    name = "flights"
    title = "Flight Booking"
    domain = "travel"

    @classmethod
    def generate_state(cls, rng: random.Random) -> FlightsState:
        flights: dict[str, Flight] = {}
        numbers: set[str] = set()
        for _ in range(rng.randint(5, 9)):
            origin, destination = rng.sample(vocab.CITIES, 2)
            fid = next_id("flt", flights)
            flights[fid] = _flight(fid, rng, numbers, origin[0], destination[0], vocab.date(rng))
        passengers: dict[str, Passenger] = {}
        for _ in range(rng.randint(4, 7)):
            pid = next_id("pax", passengers)
            who = vocab.person_name(rng)
            passengers[pid] = Passenger(id=pid, name=who, email=vocab.email_for(who, rng))
        bookings: dict[str, Booking] = {}
        codes: set[str] = set()
        for pid in passengers:
            bid = next_id("bkg", bookings)
            seat = f"{rng.randint(1, 39)}{rng.choice('ABCDEF')}"
            code = vocab.unique(rng, vocab.code, codes, "CNF")
            bookings[bid] = Booking(
                id=bid, code=code, flightId=rng.choice(list(flights)), passengerId=pid, seat=seat
            )
        return FlightsState(flights=flights, passengers=passengers, bookings=bookings)

    def _get(self, collection: str, kind: str, key: str):
        record = getattr(self.state, collection).get(key)
        if record is None:
            raise not_found(kind, key)
        return record

    def _seat_taken(self, flight_id: str, seat: str, exclude: str = "") -> bool:
        return any(
            b.flightId == flight_id and b.seat == seat and b.status == "confirmed" and b.id != exclude
            for b in self.state.bookings.values()
        )

    @tool(writes=False)
    def search_flights(self, args: SearchFlightsArgs) -> dict:
        """Search flights by origin, destination, departure day and/or flight number."""

        def same(a: str | None, b: str) -> bool:
            return a is None or a.strip().lower() == b.lower()

        hits = [
            f
            for f in self.state.flights.values()
            if same(args.origin, f.origin)
            and same(args.destination, f.destination)
            and same(args.date, f.date)
            and same(args.flightNumber, f.number)
        ]
        return {"flights": [dump(f) for f in hits]}

    @tool(writes=False)
    def get_flight(self, args: FlightIdArgs) -> dict:
        """Get one flight by id."""
        return {"flight": dump(self._get("flights", "flight", args.flightId))}

    @tool(writes=False)
    def list_passengers(self, args: ListPassengersArgs) -> dict:
        """List passenger profiles, optionally filtered by text in their name or email."""
        q = (args.query or "").lower().strip()
        hits = [p for p in self.state.passengers.values() if q in f"{p.name} {p.email}".lower()]
        return {"passengers": [dump(p) for p in hits]}

    @tool(writes=True)
    def add_passenger(self, args: AddPassengerArgs) -> dict:
        """Create a passenger profile; the email must be unique."""
        if not args.name.strip():
            raise bad_request("name must not be empty")
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        if any(p.email.lower() == args.email.lower() for p in self.state.passengers.values()):
            raise conflict(f"a passenger with email {args.email} already exists")
        pid = next_id("pax", self.state.passengers)
        passenger = Passenger(id=pid, name=args.name, email=args.email)
        self.state.passengers[pid] = passenger
        return {"passenger": dump(passenger)}

    @tool(writes=True)
    def update_passenger(self, args: UpdatePassengerArgs) -> dict:
        """Update a passenger's name or email."""
        passenger = self._get("passengers", "passenger", args.passengerId)
        changes = {f: getattr(args, f) for f in ("name", "email") if getattr(args, f) is not None}
        if not changes:
            raise bad_request("nothing to update; updatable fields: name, email")
        if "email" in changes and "@" not in changes["email"]:
            raise bad_request(f"invalid email '{changes['email']}'")
        for name, value in changes.items():
            setattr(passenger, name, value)
        return {"passenger": dump(passenger), "updated": sorted(changes)}

    @tool(writes=True)
    def book_flight(self, args: BookFlightArgs) -> dict:
        """Book a passenger on a flight; returns the booking with its confirmation code."""
        flight = self._get("flights", "flight", args.flightId)
        passenger = self._get("passengers", "passenger", args.passengerId)
        if args.seat is not None and not SEAT.match(args.seat):
            raise bad_request(f"invalid seat '{args.seat}': use row 1-39 and letter A-F, e.g. 14C")
        if flight.seatsLeft < 1:
            raise conflict(f"flight {flight.number} is full")
        seat = args.seat
        if seat is None:
            seat = next(
                f"{r}{c}"
                for r in range(1, 40)
                for c in "ABCDEF"
                if not self._seat_taken(flight.id, f"{r}{c}")
            )
        elif self._seat_taken(flight.id, seat):
            raise conflict(f"seat {seat} on {flight.number} is taken")
        bid = next_id("bkg", self.state.bookings)
        code = f"CNF-{4000 + len(self.state.bookings) + 1}"
        booking = Booking(id=bid, code=code, flightId=flight.id, passengerId=passenger.id, seat=seat)
        self.state.bookings[bid] = booking
        flight.seatsLeft -= 1
        return {"booking": dump(booking)}

    @tool(writes=False)
    def get_booking(self, args: GetBookingArgs) -> dict:
        """Look up a booking by confirmation code, with its flight and passenger."""
        for booking in self.state.bookings.values():
            if booking.code.lower() == args.confirmationCode.strip().lower():
                flight = self.state.flights.get(booking.flightId)
                passenger = self.state.passengers.get(booking.passengerId)
                return {
                    "booking": dump(booking),
                    "flight": dump(flight) if flight else None,
                    "passenger": dump(passenger) if passenger else None,
                }
        raise not_found("booking", args.confirmationCode)

    @tool(writes=False)
    def list_bookings(self, args: ListBookingsArgs) -> dict:
        """List bookings, optionally of one passenger and/or on one flight."""
        if args.passengerId is not None:
            self._get("passengers", "passenger", args.passengerId)
        if args.flightId is not None:
            self._get("flights", "flight", args.flightId)
        hits = [
            b
            for b in self.state.bookings.values()
            if (args.passengerId is None or b.passengerId == args.passengerId)
            and (args.flightId is None or b.flightId == args.flightId)
        ]
        return {"bookings": [dump(b) for b in hits]}

    @tool(writes=True)
    def change_seat(self, args: ChangeSeatArgs) -> dict:
        """Move a confirmed booking to another free seat on the same flight."""
        booking = self._get("bookings", "booking", args.bookingId)
        if not SEAT.match(args.seat):
            raise bad_request(f"invalid seat '{args.seat}': use row 1-39 and letter A-F, e.g. 14C")
        if booking.status != "confirmed":
            raise conflict(f"booking {booking.code} is {booking.status}")
        if booking.seat == args.seat or self._seat_taken(booking.flightId, args.seat, booking.id):
            raise conflict(f"seat {args.seat} is not available")
        booking.seat = args.seat
        return {"booking": dump(booking)}

    @tool(writes=True)
    def change_flight(self, args: ChangeFlightArgs) -> dict:
        """Rebook a confirmed booking onto another flight (the seat is reassigned)."""
        booking = self._get("bookings", "booking", args.bookingId)
        flight = self._get("flights", "flight", args.flightId)
        if booking.status != "confirmed":
            raise conflict(f"booking {booking.code} is {booking.status}")
        if flight.id == booking.flightId:
            raise conflict(f"booking {booking.code} is already on {flight.number}")
        if flight.seatsLeft < 1:
            raise conflict(f"flight {flight.number} is full")
        old = self.state.flights.get(booking.flightId)
        if old is not None:
            old.seatsLeft += 1
        flight.seatsLeft -= 1
        booking.flightId = flight.id
        booking.seat = next(
            f"{r}{c}" for r in range(1, 40) for c in "ABCDEF" if not self._seat_taken(flight.id, f"{r}{c}")
        )
        return {"booking": dump(booking)}

    @tool(writes=True)
    def cancel_booking(self, args: BookingIdArgs) -> dict:
        """Cancel a booking; its seat is released."""
        booking = self._get("bookings", "booking", args.bookingId)
        if booking.status == "cancelled":
            raise conflict(f"booking {booking.code} is already cancelled")
        booking.status = "cancelled"
        flight = self.state.flights.get(booking.flightId)
        if flight is not None:
            flight.seatsLeft += 1
        return {"booking": dump(booking)}

    @classmethod
    def example_arguments(cls, state: FlightsState) -> dict[str, dict]:
        flight = next(iter(state.flights.values()))
        passenger = next(iter(state.passengers.values()))
        booking = next(iter(state.bookings.values()))
        other = next(f for f in state.flights.values() if f.id != booking.flightId and f.seatsLeft > 0)
        seat = next(f"{r}{c}" for r in range(1, 40) for c in "ABCDEF" if f"{r}{c}" != booking.seat)
        return {
            "search_flights": {"destination": flight.destination},
            "get_flight": {"flightId": flight.id},
            "list_passengers": {"query": passenger.name.split()[0]},
            "add_passenger": {"name": "Rui Costa", "email": "rui.costa@example.org"},
            "update_passenger": {"passengerId": passenger.id, "email": "new.address@example.org"},
            "book_flight": {"flightId": flight.id, "passengerId": passenger.id},
            "get_booking": {"confirmationCode": booking.code},
            "list_bookings": {"passengerId": booking.passengerId},
            "change_seat": {"bookingId": booking.id, "seat": seat},
            "change_flight": {"bookingId": booking.id, "flightId": other.id},
            "cancel_booking": {"bookingId": booking.id},
        }

    @classmethod
    def links(cls) -> list[Link[FlightsState]]:
        return [
            Hop(
                "booking_passenger",
                "booking_code",
                "person",
                _plant_booking_passenger,
                relation="the passenger on flight booking {of}",
            ),
            Hop(
                "passenger_destination",
                "person",
                "city",
                _plant_passenger_destination,
                relation="the destination city of the flight booked by {of}",
            ),
            Hop(
                "flight_to_city_date",
                "city",
                "date",
                _plant_flight_date,
                relation="the departure date of the flight to {of}",
            ),
            Hop(
                "flight_on_date_number",
                "date",
                "flight_number",
                _plant_flight_number,
                relation="the number of the flight departing on {of}",
            ),
            Action("cancel_booking", "booking_code", _plant_cancel_booking),
            Action("book_person", "person", _plant_book_person),
            Action("change_seat_to_city", "city", _plant_change_seat),
            Action("cancel_person_booking", "person", _plant_cancel_person_booking),
            Action("add_passenger", "person", _plant_add_passenger),
            Action("update_passenger_email", "email", _plant_update_passenger_email),
            Action("rebook_on_date", "date", _plant_rebook_on_date),
        ]


def _flight(
    fid: str, rng: random.Random, numbers: set[str], origin: str, destination: str, day: str
) -> Flight:
    number = vocab.unique(rng, lambda r: f"{r.choice(AIRLINES)}{r.randint(100, 999)}", numbers)
    departs = f"{rng.randint(6, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    return Flight(
        id=fid,
        number=number,
        origin=origin,
        destination=destination,
        date=day,
        departs=departs,
        price=float(rng.randint(80, 900)),
        seatsLeft=rng.randint(5, 60),
    )


def _new_flight(
    state: FlightsState, rng: random.Random, destination: str | None = None, day: str | None = None
) -> Flight:
    dest = destination or vocab.city(rng)[0]
    origin = vocab.unique(rng, lambda r: vocab.city(r)[0], {dest})
    fid = next_id("flt", state.flights)
    flight = _flight(
        fid, rng, {f.number for f in state.flights.values()}, origin, dest, day or vocab.date(rng)
    )
    state.flights[fid] = flight
    return flight


def _drop_orphans(state: FlightsState) -> None:
    """Remove bookings whose flight or passenger is gone (ids are reused by `next_id`)."""
    for bid in [
        b.id
        for b in state.bookings.values()
        if b.flightId not in state.flights or b.passengerId not in state.passengers
    ]:
        del state.bookings[bid]


def _new_passenger(state: FlightsState, rng: random.Random, name: str) -> Passenger:
    low = name.lower()
    for pid in [p.id for p in state.passengers.values() if low in f"{p.name} {p.email}".lower()]:
        del state.passengers[pid]
    _drop_orphans(state)
    pid = next_id("pax", state.passengers)
    passenger = Passenger(id=pid, name=name, email=vocab.email_for(name, rng))
    state.passengers[pid] = passenger
    return passenger


def _new_booking(
    state: FlightsState, rng: random.Random, flight_id: str, passenger_id: str, code: str | None = None
) -> Booking:
    code = code or vocab.unique(rng, vocab.code, {b.code for b in state.bookings.values()}, "CNF")
    for bid in [b.id for b in state.bookings.values() if b.code.lower() == code.lower()]:
        del state.bookings[bid]
    bid = next_id("bkg", state.bookings)
    booking = Booking(
        id=bid, code=code, flightId=flight_id, passengerId=passenger_id, seat=f"{rng.randint(20, 39)}B"
    )
    state.bookings[bid] = booking
    return booking


def _plant_booking_passenger(state: FlightsState, rng: random.Random, value: str) -> HopPlan:
    passenger = _new_passenger(state, rng, vocab.person_name(rng))
    _new_booking(state, rng, _new_flight(state, rng).id, passenger.id, code=value)
    call = PlannedCall(
        "get_booking",
        {"confirmationCode": value},
        inputs={"confirmationCode": "{value}"},
        reveals=("passenger", "name"),
    )
    return HopPlan(
        [call],
        passenger.name,
        "look up the flight booking with that confirmation code and note the passenger's name",
    )


def _plant_passenger_destination(state: FlightsState, rng: random.Random, value: str) -> HopPlan:
    passenger = _new_passenger(state, rng, value)
    flight = _new_flight(state, rng)
    _new_booking(state, rng, flight.id, passenger.id)
    calls = [
        PlannedCall("list_passengers", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_bookings", {"passengerId": None}, bind={"passengerId": (0, ("passengers", 0, "id"))}
        ),
        PlannedCall(
            "get_flight",
            {"flightId": None},
            bind={"flightId": (1, ("bookings", 0, "flightId"))},
            reveals=("flight", "destination"),
        ),
    ]
    return HopPlan(
        calls, flight.destination, "check that person's flight booking and note the city they are flying to"
    )


def _plant_flight_date(state: FlightsState, rng: random.Random, value: str) -> HopPlan:
    for fid in [f.id for f in state.flights.values() if f.destination.lower() == value.lower()]:
        del state.flights[fid]
    _drop_orphans(state)
    flight = _new_flight(state, rng, destination=value)
    call = PlannedCall(
        "search_flights",
        {"destination": value},
        inputs={"destination": "{value}"},
        reveals=("flights", 0, "date"),
    )
    return HopPlan([call], flight.date, "search the flights to that city and note the date of the only one")


def _plant_flight_number(state: FlightsState, rng: random.Random, value: str) -> HopPlan:
    for fid in [f.id for f in state.flights.values() if f.date == value]:
        del state.flights[fid]
    _drop_orphans(state)
    flight = _new_flight(state, rng, day=value)
    call = PlannedCall(
        "search_flights", {"date": value}, inputs={"date": "{value}"}, reveals=("flights", 0, "number")
    )
    return HopPlan(
        [call], flight.number, "search the flights departing on that date and note the flight number"
    )


def _plant_cancel_booking(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    passenger = _new_passenger(state, rng, vocab.person_name(rng))
    _new_booking(state, rng, _new_flight(state, rng).id, passenger.id, code=value)
    calls = [
        PlannedCall("get_booking", {"confirmationCode": value}, inputs={"confirmationCode": "{value}"}),
        PlannedCall("cancel_booking", {"bookingId": None}, bind={"bookingId": (0, ("booking", "id"))}),
    ]
    crit = expect_record("bookings", f"flight booking {value} is cancelled", code=value, status="cancelled")
    return ActionPlan(calls, [crit], "cancel the flight booking with that confirmation code")


def _plant_book_person(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    passenger = _new_passenger(state, rng, value)
    flight = _new_flight(state, rng)
    calls = [
        PlannedCall("list_passengers", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "book_flight",
            {"flightId": flight.id, "passengerId": None},
            bind={"passengerId": (0, ("passengers", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "bookings",
        f"{value} is booked on flight {flight.number}",
        flightId=flight.id,
        passengerId=passenger.id,
        status="confirmed",
    )
    phrase = f"book that person on flight {flight.number}"
    return ActionPlan(calls, [crit], phrase)


def _plant_change_seat(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    for fid in [f.id for f in state.flights.values() if f.destination.lower() == value.lower()]:
        del state.flights[fid]
    _drop_orphans(state)
    flight = _new_flight(state, rng, destination=value)
    passenger = _new_passenger(state, rng, vocab.person_name(rng))
    _new_booking(state, rng, flight.id, passenger.id)
    seat = f"{rng.randint(1, 19)}A"
    calls = [
        PlannedCall("search_flights", {"destination": value}, inputs={"destination": "{value}"}),
        PlannedCall("list_bookings", {"flightId": None}, bind={"flightId": (0, ("flights", 0, "id"))}),
        PlannedCall(
            "change_seat", {"bookingId": None, "seat": seat}, bind={"bookingId": (1, ("bookings", 0, "id"))}
        ),
    ]
    crit = expect_record(
        "bookings",
        f"{passenger.name} sits in {seat} on the flight to {value}",
        flightId=flight.id,
        passengerId=passenger.id,
        seat=seat,
    )
    phrase = f"move {passenger.name}'s booking on the flight to that city to seat {seat}"
    return ActionPlan(calls, [crit], phrase)


def _drop_passengers(state: FlightsState, text: str) -> None:
    """Make a passenger lookup unambiguous: remove passengers whose name or email mentions `text`."""
    low = text.lower()
    for pid in [p.id for p in state.passengers.values() if low in f"{p.name} {p.email}".lower()]:
        del state.passengers[pid]
    _drop_orphans(state)


def _plant_cancel_person_booking(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    passenger = _new_passenger(state, rng, value)
    booking = _new_booking(state, rng, _new_flight(state, rng).id, passenger.id)
    calls = [
        PlannedCall("list_passengers", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_bookings", {"passengerId": None}, bind={"passengerId": (0, ("passengers", 0, "id"))}
        ),
        PlannedCall("cancel_booking", {"bookingId": None}, bind={"bookingId": (1, ("bookings", 0, "id"))}),
    ]
    crit = expect_record(
        "bookings",
        f"{value}'s flight booking {booking.code} is cancelled",
        id=booking.id,
        code=booking.code,
        passengerId=passenger.id,
        status="cancelled",
    )
    return ActionPlan(calls, [crit], "cancel that person's flight booking")


def _plant_add_passenger(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_passengers(state, value)
    taken = {p.email.lower() for p in state.passengers.values()}
    email = vocab.unique(rng, lambda r: f"traveler.{r.randint(1000, 9999)}@{r.choice(vocab.DOMAINS)}", taken)
    call = PlannedCall("add_passenger", {"name": value, "email": email}, inputs={"name": "{value}"})
    crit = expect_record(
        "passengers", f"{value} has a passenger profile with the email {email}", name=value, email=email
    )
    return ActionPlan([call], [crit], f"create a passenger profile for that person with the email {email}")


def _plant_update_passenger_email(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_passengers(state, value)
    passenger = _new_passenger(state, rng, vocab.person_name(rng))
    if passenger.email.lower() == value.lower():
        passenger.email = f"old.{passenger.email}"
    booking = _new_booking(state, rng, _new_flight(state, rng).id, passenger.id)
    calls = [
        PlannedCall("get_booking", {"confirmationCode": booking.code}),
        PlannedCall(
            "update_passenger",
            {"passengerId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"passengerId": (0, ("passenger", "id"))},
        ),
    ]
    crit = expect_record(
        "passengers",
        f"the passenger on booking {booking.code} has the email {value}",
        id=passenger.id,
        email=value,
    )
    phrase = (
        f"update the email on the passenger profile of flight booking {booking.code} to that email address"
    )
    return ActionPlan(calls, [crit], phrase)


def _plant_rebook_on_date(state: FlightsState, rng: random.Random, value: str) -> ActionPlan:
    for fid in [f.id for f in state.flights.values() if f.date == value]:
        del state.flights[fid]
    _drop_orphans(state)
    old = _new_flight(state, rng, day=vocab.unique(rng, vocab.date, {value}))
    new = _new_flight(state, rng, destination=old.destination, day=value)
    new.origin = old.origin
    passenger = _new_passenger(state, rng, vocab.person_name(rng))
    booking = _new_booking(state, rng, old.id, passenger.id)
    calls = [
        PlannedCall("list_passengers", {"query": passenger.name}),
        PlannedCall(
            "list_bookings", {"passengerId": None}, bind={"passengerId": (0, ("passengers", 0, "id"))}
        ),
        PlannedCall(
            "search_flights",
            {"destination": old.destination, "date": value},
            inputs={"date": "{value}"},
        ),
        PlannedCall(
            "change_flight",
            {"bookingId": None, "flightId": None},
            bind={"bookingId": (1, ("bookings", 0, "id")), "flightId": (2, ("flights", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "bookings",
        f"{passenger.name}'s booking is moved to flight {new.number} on {value}",
        id=booking.id,
        passengerId=passenger.id,
        flightId=new.id,
        status="confirmed",
    )
    phrase = f"rebook {passenger.name} from flight {old.number} onto the flight on the same route departing on that date"
    return ActionPlan(calls, [crit], phrase)


register_service(FlightsService)

"""HR service (BambooHR/Workday-like): employees, departments, leave, reviews and onboarding."""

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
from envpipeline.services.links import Action, ActionPlan, Hop, HopPlan, Link, PlannedCall, expect_record
from envpipeline.services.registry import register_service

DEPARTMENTS = ("Engineering", "Sales", "Finance", "People", "Support", "Marketing", "Legal")
JOBS = ("Engineer", "Account Executive", "Accountant", "Recruiter", "Support Agent", "Designer", "Analyst")
LEAVE_KINDS = ("vacation", "sick", "parental", "unpaid")
EMPLOYEE_FIELDS = ("name", "email", "code", "city", "jobTitle")
_EMPLOYEE_TEXT = attrgetter(*EMPLOYEE_FIELDS)


class Department(Record):
    id: str
    name: str
    city: str
    head: str


class Employee(Record):
    id: str
    code: str
    name: str
    email: str
    departmentId: str
    jobTitle: str
    city: str
    startDate: str
    manager: str = ""
    status: str = "active"


class LeaveRequest(Record):
    id: str
    employeeId: str
    employeeName: str
    kind: str
    startDate: str
    endDate: str
    status: str = "pending"


class Review(Record):
    id: str
    employeeId: str
    reviewer: str
    date: str
    rating: int
    summary: str = ""


class OnboardingTask(Record):
    id: str
    employeeId: str
    title: str
    dueDate: str
    done: bool = False


class HrState(Strict):
    departments: dict[str, Department] = {}
    employees: dict[str, Employee] = {}
    leave_requests: dict[str, LeaveRequest] = {}
    reviews: dict[str, Review] = {}
    onboarding: dict[str, OnboardingTask] = {}


class ListDepartmentsArgs(ToolArgs):
    city: Annotated[str | None, Field(description="only departments based in this city")] = None


class ListEmployeesArgs(ToolArgs):
    departmentId: Annotated[str | None, Field(description="only employees of this department")] = None
    status: Annotated[str | None, Field(description="active or terminated")] = None


class SearchEmployeesArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in name, email, employee code, city, job title")]


class EmployeeIdArgs(ToolArgs):
    employeeId: Annotated[str, Field(description="employee id")]


class HireArgs(ToolArgs):
    name: Annotated[str, Field(description="full name")]
    email: Annotated[str, Field(description="work email address (unique)")]
    departmentId: Annotated[str, Field(description="department id")]
    jobTitle: Annotated[str, Field(description="job title")]
    startDate: Annotated[str, Field(description="first working day (YYYY-MM-DD)")]
    city: Annotated[str, Field(description="office city")] = ""


class UpdateEmployeeArgs(ToolArgs):
    employeeId: Annotated[str, Field(description="employee id")]
    jobTitle: Annotated[str | None, Field(description="new job title")] = None
    city: Annotated[str | None, Field(description="new office city")] = None
    departmentId: Annotated[str | None, Field(description="new department id")] = None
    manager: Annotated[str | None, Field(description="new manager's full name")] = None


class ListLeaveArgs(ToolArgs):
    employeeId: Annotated[str | None, Field(description="only this employee's requests")] = None
    status: Annotated[str | None, Field(description="pending, approved or rejected")] = None
    date: Annotated[str | None, Field(description="only leave covering this day (YYYY-MM-DD)")] = None


class RequestLeaveArgs(ToolArgs):
    employeeId: Annotated[str, Field(description="employee id")]
    kind: Annotated[str, Field(description="vacation, sick, parental or unpaid")]
    startDate: Annotated[str, Field(description="first day off (YYYY-MM-DD)")]
    endDate: Annotated[str, Field(description="last day off (YYYY-MM-DD)")]


class DecideLeaveArgs(ToolArgs):
    leaveId: Annotated[str, Field(description="leave request id")]
    decision: Annotated[str, Field(description="approved or rejected")]


class ListReviewsArgs(ToolArgs):
    employeeId: Annotated[str | None, Field(description="only reviews of this employee")] = None


class SubmitReviewArgs(ToolArgs):
    employeeId: Annotated[str, Field(description="employee id")]
    reviewer: Annotated[str, Field(description="reviewer's full name")]
    date: Annotated[str, Field(description="review date (YYYY-MM-DD)")]
    rating: Annotated[int, Field(description="rating from 1 (poor) to 5 (excellent)")]
    summary: Annotated[str, Field(description="short written summary")] = ""


class ListOnboardingArgs(ToolArgs):
    employeeId: Annotated[str | None, Field(description="only this employee's tasks")] = None


class AddOnboardingArgs(ToolArgs):
    employeeId: Annotated[str, Field(description="employee id")]
    title: Annotated[str, Field(description="task title")]
    dueDate: Annotated[str, Field(description="due date (YYYY-MM-DD)")]


class TaskIdArgs(ToolArgs):
    taskId: Annotated[str, Field(description="onboarding task id")]


def _new_employee(state: HrState, rng: random.Random, **fields) -> Employee:
    name = fields.pop("name", None) or vocab.unique(
        rng, vocab.person_name, {e.name for e in state.employees.values()}
    )
    fields.setdefault("email", vocab.email_for(name, rng))
    fields.setdefault(
        "code", vocab.unique(rng, vocab.code, {e.code for e in state.employees.values()}, "EMP")
    )
    fields.setdefault("city", vocab.city(rng)[0])
    fields.setdefault("startDate", vocab.date(rng, rng.randint(2018, 2025)))
    eid = next_id("emp", state.employees)
    employee = Employee(
        id=eid,
        name=name,
        departmentId=rng.choice([d.id for d in state.departments.values() if d.name in DEPARTMENTS]),
        jobTitle=rng.choice(JOBS),
        manager=vocab.person_name(rng),
        **fields,
    )
    state.employees[eid] = employee
    return employee


def _new_leave(
    state: HrState, employee: Employee, kind: str, start: str, end: str, status: str
) -> LeaveRequest:
    lid = next_id("lv", state.leave_requests)
    leave = LeaveRequest(
        id=lid,
        employeeId=employee.id,
        employeeName=employee.name,
        kind=kind,
        startDate=start,
        endDate=end,
        status=status,
    )
    state.leave_requests[lid] = leave
    return leave


class HrService(Service[HrState]):
    name = "hr"
    title = "HR"
    domain = "business"

    @classmethod
    def generate_state(cls, rng: random.Random) -> HrState:
        state = HrState()
        for name in rng.sample(DEPARTMENTS, rng.randint(4, 5)):
            did = next_id("dep", state.departments)
            state.departments[did] = Department(
                id=did, name=name, city=vocab.city(rng)[0], head=vocab.person_name(rng)
            )
        for _ in range(rng.randint(6, 9)):
            _new_employee(state, rng)
        employees = list(state.employees.values())
        for i, emp in enumerate(rng.sample(employees, 4)):
            day = vocab.date(rng)
            status = "pending" if i == 0 else rng.choice(("pending", "approved"))
            _new_leave(state, emp, rng.choice(LEAVE_KINDS), day, day, status)
        for emp in rng.sample(employees, 4):
            rid = next_id("rev", state.reviews)
            state.reviews[rid] = Review(
                id=rid,
                employeeId=emp.id,
                reviewer=emp.manager,
                date=vocab.date(rng),
                rating=rng.randint(2, 5),
            )
        for emp in rng.sample(employees, 4):
            tid = next_id("onb", state.onboarding)
            state.onboarding[tid] = OnboardingTask(
                id=tid, employeeId=emp.id, title=vocab.title(rng), dueDate=vocab.date(rng)
            )
        return state

    @tool(writes=False)
    def list_departments(self, args: ListDepartmentsArgs) -> dict:
        """List departments, optionally only those based in one city."""
        found = [
            d for d in self.state.departments.values() if not args.city or d.city.lower() == args.city.lower()
        ]
        return {"departments": [dump(d) for d in found]}

    @tool(writes=False)
    def list_employees(self, args: ListEmployeesArgs) -> dict:
        """List employees, optionally by department or status."""
        check_reference(self.state.departments, "department", args.departmentId)
        found = [
            e
            for e in self.state.employees.values()
            if (not args.departmentId or e.departmentId == args.departmentId)
            and (not args.status or e.status == args.status)
        ]
        return {"employees": [dump(e) for e in found]}

    @tool(writes=False)
    def search_employees(self, args: SearchEmployeesArgs) -> dict:
        """Search employees by name, email, employee code, city or job title."""
        q = args.query.strip().lower()
        if not q:
            raise bad_request("query must not be empty")
        hits = [e for e in self.state.employees.values() if text_hit(q, _EMPLOYEE_TEXT(e))]
        return {"employees": [dump(e) for e in hits]}

    @tool(writes=False)
    def get_employee(self, args: EmployeeIdArgs) -> dict:
        """Get one employee's record."""
        return {"employee": dump(find_record(self.state.employees, "employee", args.employeeId))}

    @tool(writes=True)
    def hire_employee(self, args: HireArgs) -> dict:
        """Hire a new employee into a department; the work email must be unique."""
        check_reference(self.state.departments, "department", args.departmentId)
        if "@" not in args.email or not args.name.strip():
            raise bad_request("an employee needs a name and a valid email address")
        if any(e.email.lower() == args.email.lower() for e in self.state.employees.values()):
            raise conflict(f"an employee with email {args.email} already exists")
        codes = {e.code for e in self.state.employees.values()}
        n = len(self.state.employees) + 1
        while f"EMP-{9000 + n}" in codes:
            n += 1
        eid = next_id("emp", self.state.employees)
        employee = Employee(id=eid, code=f"EMP-{9000 + n}", **args.model_dump())
        self.state.employees[eid] = employee
        return {"employee": dump(employee)}

    @tool(writes=True)
    def update_employee(self, args: UpdateEmployeeArgs) -> dict:
        """Update an employee's job title, office city, department or manager."""
        employee = find_record(self.state.employees, "employee", args.employeeId)
        check_reference(self.state.departments, "department", args.departmentId)
        changes = {f: v for f, v in args.model_dump(exclude={"employeeId"}).items() if v is not None}
        if not changes:
            raise bad_request("nothing to update; give jobTitle, city, departmentId or manager")
        for field, value in changes.items():
            setattr(employee, field, value)
        return {"employee": dump(employee), "updated": sorted(changes)}

    @tool(writes=True)
    def terminate_employee(self, args: EmployeeIdArgs) -> dict:
        """Terminate an active employee."""
        employee = find_record(self.state.employees, "employee", args.employeeId)
        if employee.status == "terminated":
            raise conflict(f"{employee.name} is already terminated")
        employee.status = "terminated"
        return {"employee": dump(employee)}

    @tool(writes=False)
    def list_leave_requests(self, args: ListLeaveArgs) -> dict:
        """List leave requests, optionally by employee, status or a day they cover."""
        check_reference(self.state.employees, "employee", args.employeeId)
        found = [
            lv
            for lv in self.state.leave_requests.values()
            if (not args.employeeId or lv.employeeId == args.employeeId)
            and (not args.status or lv.status == args.status)
            and (not args.date or lv.startDate <= args.date <= lv.endDate)
        ]
        return {"leaveRequests": [dump(lv) for lv in found]}

    @tool(writes=True)
    def request_leave(self, args: RequestLeaveArgs) -> dict:
        """File a leave request for an employee (status pending)."""
        employee = find_record(self.state.employees, "employee", args.employeeId)
        if args.kind not in LEAVE_KINDS:
            raise bad_request(f"kind must be one of {', '.join(LEAVE_KINDS)}")
        if args.endDate < args.startDate:
            raise bad_request("endDate must not be before startDate")
        leave = _new_leave(self.state, employee, args.kind, args.startDate, args.endDate, "pending")
        return {"leaveRequest": dump(leave)}

    @tool(writes=True)
    def decide_leave(self, args: DecideLeaveArgs) -> dict:
        """Approve or reject a pending leave request."""
        leave = find_record(self.state.leave_requests, "leave request", args.leaveId)
        if args.decision not in ("approved", "rejected"):
            raise bad_request("decision must be approved or rejected")
        if leave.status != "pending":
            raise conflict(f"leave request {leave.id} is already {leave.status}")
        leave.status = args.decision
        return {"leaveRequest": dump(leave)}

    @tool(writes=False)
    def list_reviews(self, args: ListReviewsArgs) -> dict:
        """List performance reviews, optionally of one employee."""
        check_reference(self.state.employees, "employee", args.employeeId)
        found = [
            r for r in self.state.reviews.values() if not args.employeeId or r.employeeId == args.employeeId
        ]
        return {"reviews": [dump(r) for r in found]}

    @tool(writes=True)
    def submit_review(self, args: SubmitReviewArgs) -> dict:
        """Submit a performance review (rating 1 to 5) for an employee."""
        check_reference(self.state.employees, "employee", args.employeeId)
        if not 1 <= args.rating <= 5:
            raise bad_request("rating must be between 1 and 5")
        rid = next_id("rev", self.state.reviews)
        review = Review(id=rid, **args.model_dump())
        self.state.reviews[rid] = review
        return {"review": dump(review)}

    @tool(writes=False)
    def list_onboarding_tasks(self, args: ListOnboardingArgs) -> dict:
        """List onboarding tasks, optionally of one employee."""
        check_reference(self.state.employees, "employee", args.employeeId)
        found = [
            t
            for t in self.state.onboarding.values()
            if not args.employeeId or t.employeeId == args.employeeId
        ]
        return {"tasks": [dump(t) for t in found]}

    @tool(writes=True)
    def add_onboarding_task(self, args: AddOnboardingArgs) -> dict:
        """Add an onboarding task for an employee."""
        check_reference(self.state.employees, "employee", args.employeeId)
        if not args.title.strip():
            raise bad_request("title must not be empty")
        tid = next_id("onb", self.state.onboarding)
        task = OnboardingTask(id=tid, **args.model_dump())
        self.state.onboarding[tid] = task
        return {"task": dump(task)}

    @tool(writes=True)
    def complete_onboarding_task(self, args: TaskIdArgs) -> dict:
        """Mark an onboarding task as done."""
        task = find_record(self.state.onboarding, "onboarding task", args.taskId)
        if task.done:
            raise conflict(f"onboarding task {task.id} is already done")
        task.done = True
        return {"task": dump(task)}

    @classmethod
    def example_arguments(cls, state: HrState) -> dict[str, dict]:
        emp = next(iter(state.employees.values()))
        dep = next(iter(state.departments.values()))
        leave = next(iter(state.leave_requests.values()))
        task = next(iter(state.onboarding.values()))
        return {
            "list_departments": {"city": dep.city},
            "list_employees": {"departmentId": emp.departmentId, "status": "active"},
            "search_employees": {"query": emp.code},
            "get_employee": {"employeeId": emp.id},
            "hire_employee": {
                "name": "Ada Lovelace",
                "email": "ada.lovelace@example.com",
                "departmentId": dep.id,
                "jobTitle": "Engineer",
                "startDate": "2026-06-01",
            },
            "update_employee": {"employeeId": emp.id, "jobTitle": "Staff Engineer", "departmentId": dep.id},
            "terminate_employee": {"employeeId": emp.id},
            "list_leave_requests": {"employeeId": leave.employeeId},
            "request_leave": {
                "employeeId": emp.id,
                "kind": "vacation",
                "startDate": "2026-08-03",
                "endDate": "2026-08-07",
            },
            "decide_leave": {"leaveId": leave.id, "decision": "rejected"},
            "list_reviews": {"employeeId": emp.id},
            "submit_review": {
                "employeeId": emp.id,
                "reviewer": "Vera Costa",
                "date": "2026-12-01",
                "rating": 4,
            },
            "list_onboarding_tasks": {"employeeId": task.employeeId},
            "add_onboarding_task": {"employeeId": emp.id, "title": "Laptop setup", "dueDate": "2026-06-02"},
            "complete_onboarding_task": {"taskId": task.id},
        }

    @classmethod
    def links(cls) -> list[Link[HrState]]:
        return [
            Hop(
                "employee_by_code",
                "employee_code",
                "person",
                _plant_code_person,
                relation="the full name of the employee with the employee code {of}",
            ),
            Hop(
                "employee_office_city",
                "email",
                "city",
                _plant_email_city,
                relation="the office city of the employee whose email is {of}",
            ),
            Hop(
                "employee_on_leave",
                "date",
                "person",
                _plant_date_person,
                relation="the employee who is on leave on {of}",
            ),
            Hop(
                "employee_start_date",
                "person",
                "date",
                _plant_person_date,
                relation="the start date of the employee {of}",
            ),
            Action("approve_leave", "person", _plant_approve),
            Action("add_onboarding_task", "title", _plant_onboarding),
            Action("relocate_employee", "city", _plant_relocate),
            Action("review_on_date", "date", _plant_review),
            Hop(
                "office_employee",
                "city",
                "person",
                _plant_office_employee,
                relation="the only employee of the department based in {of}",
            ),
            Hop(
                "employee_reviewer",
                "email",
                "person",
                _plant_email_reviewer,
                relation="the reviewer of the performance review of the employee whose email is {of}",
            ),
            Action("complete_onboarding", "person", _plant_complete_onboarding),
            Action("request_leave", "person", _plant_request_leave),
            Action("terminate_employee", "email", _plant_terminate),
            Action("hire_on_date", "date", _plant_hire),
        ]


def _drop_employees(state: HrState, value: str) -> None:
    """Make a lookup unambiguous: remove employees whose searchable text mentions `value`."""
    low = value.lower()
    gone = {
        e.id for e in state.employees.values() if any(low in getattr(e, f).lower() for f in EMPLOYEE_FIELDS)
    }
    for eid in gone:
        del state.employees[eid]
    for collection in (state.leave_requests, state.reviews, state.onboarding):
        for rid in [r.id for r in collection.values() if r.employeeId in gone]:
            del collection[rid]


def _search(query: str, carried: bool = False, reveals: tuple | None = None) -> PlannedCall:
    inputs = {"query": "{value}"} if carried else {}
    return PlannedCall("search_employees", {"query": query}, inputs=inputs, reveals=reveals)


def _employee_hop(
    state: HrState, rng: random.Random, value: str, field: str, reveal: str, phrase: str
) -> HopPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, **{field: value})
    return HopPlan([_search(value, True, ("employees", 0, reveal))], getattr(employee, reveal), phrase)


def _plant_code_person(state: HrState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up the employee with that employee code in hr and note their full name"
    return _employee_hop(state, rng, value, "code", "name", phrase)


def _plant_email_city(state: HrState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up the employee with that email address in hr and note the city of their office"
    return _employee_hop(state, rng, value, "email", "city", phrase)


def _plant_person_date(state: HrState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up that person in hr and note their start date"
    return _employee_hop(state, rng, value, "name", "startDate", phrase)


def _plant_date_person(state: HrState, rng: random.Random, value: str) -> HopPlan:
    for lid in [lv.id for lv in state.leave_requests.values() if lv.startDate <= value <= lv.endDate]:
        del state.leave_requests[lid]
    employee = _new_employee(state, rng)
    _new_leave(state, employee, "vacation", value, value, "approved")
    call = PlannedCall(
        "list_leave_requests",
        {"date": value},
        inputs={"date": "{value}"},
        reveals=("leaveRequests", 0, "employeeName"),
    )
    return HopPlan([call], employee.name, "check in hr who is on leave on that date and note their full name")


def _plant_approve(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, name=value)
    day = vocab.date(rng)
    leave = _new_leave(state, employee, "vacation", day, day, "pending")
    calls = [
        _search(value, True),
        PlannedCall(
            "list_leave_requests", {"employeeId": None}, bind={"employeeId": (0, ("employees", 0, "id"))}
        ),
        PlannedCall(
            "decide_leave",
            {"leaveId": None, "decision": "approved"},
            bind={"leaveId": (1, ("leaveRequests", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "leave_requests", f"the leave of {value} on {day} is approved", id=leave.id, status="approved"
    )
    return ActionPlan(calls, [crit], "approve the pending leave request of that person in hr")


def _planted_employee(state: HrState, rng: random.Random, **fields) -> Employee:
    employee = _new_employee(state, rng, **fields)
    _drop_employees(state, employee.name)
    state.employees[employee.id] = employee
    return employee


def _bound(tool_name: str, arguments: dict, **inputs: str) -> PlannedCall:
    return PlannedCall(tool_name, arguments, inputs=inputs, bind={"employeeId": (0, ("employees", 0, "id"))})


def _plant_onboarding(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    employee = _planted_employee(state, rng)
    due = vocab.date(rng)
    calls = [
        _search(employee.name),
        _bound("add_onboarding_task", {"employeeId": None, "title": value, "dueDate": due}, title="{value}"),
    ]
    crit = expect_record(
        "onboarding",
        f"{employee.name} has the onboarding task '{value}'",
        employeeId=employee.id,
        title=value,
    )
    return ActionPlan(
        calls, [crit], f"add an onboarding task with that title, due {due}, for {employee.name} in hr"
    )


def _plant_relocate(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    other = next(c[0] for c in vocab.CITIES if c[0] != value)
    employee = _planted_employee(state, rng, city=other)
    calls = [
        _search(employee.name),
        _bound("update_employee", {"employeeId": None, "city": value}, city="{value}"),
    ]
    crit = expect_record("employees", f"{employee.name} now works from {value}", id=employee.id, city=value)
    return ActionPlan(calls, [crit], f"move {employee.name}'s office to that city in hr")


def _plant_review(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    employee = _planted_employee(state, rng)
    reviewer = vocab.person_name(rng)
    arguments = {
        "employeeId": None,
        "reviewer": reviewer,
        "date": value,
        "rating": 4,
        "summary": "Strong year",
    }
    calls = [_search(employee.name), _bound("submit_review", arguments, date="{value}")]
    crit = expect_record(
        "reviews",
        f"{employee.name} has a rating-4 review dated {value}",
        employeeId=employee.id,
        date=value,
        rating=4,
    )
    phrase = f"submit an hr performance review for {employee.name} dated that date, by {reviewer}, rating 4"
    return ActionPlan(calls, [crit], phrase)


def _free_city(state: HrState, rng: random.Random, *avoid: str) -> str:
    """A city no department is based in (nor any of `avoid`)."""
    taken = {d.city.lower() for d in state.departments.values()} | {a.lower() for a in avoid}
    free = [c[0] for c in vocab.CITIES if c[0].lower() not in taken]
    return rng.choice(free)


def _plant_office_employee(state: HrState, rng: random.Random, value: str) -> HopPlan:
    for dep in state.departments.values():
        if dep.city.lower() == value.lower():
            dep.city = _free_city(state, rng, value)
    did = next_id("dep", state.departments)
    state.departments[did] = Department(
        id=did, name=f"{value} Office", city=value, head=vocab.person_name(rng)
    )
    employee = _planted_employee(state, rng, city=_free_city(state, rng, value))
    employee.departmentId = did
    calls = [
        PlannedCall("list_departments", {"city": value}, inputs={"city": "{value}"}),
        PlannedCall(
            "list_employees",
            {"departmentId": None},
            bind={"departmentId": (0, ("departments", 0, "id"))},
            reveals=("employees", 0, "name"),
        ),
    ]
    return HopPlan(
        calls,
        employee.name,
        "find the hr department based in that city and note the full name of its only employee",
    )


def _plant_email_reviewer(state: HrState, rng: random.Random, value: str) -> HopPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, email=value)
    reviewer = vocab.unique(rng, vocab.person_name, {employee.name, employee.manager})
    rid = next_id("rev", state.reviews)
    state.reviews[rid] = Review(
        id=rid,
        employeeId=employee.id,
        reviewer=reviewer,
        date=vocab.date(rng),
        rating=rng.randint(2, 5),
        summary="Annual review",
    )
    calls = [
        _search(value, True),
        PlannedCall(
            "list_reviews",
            {"employeeId": None},
            bind={"employeeId": (0, ("employees", 0, "id"))},
            reveals=("reviews", 0, "reviewer"),
        ),
    ]
    return HopPlan(
        calls,
        reviewer,
        "look up the employee with that email address in hr and note who wrote their performance review",
    )


def _plant_complete_onboarding(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, name=value)
    tid = next_id("onb", state.onboarding)
    task = OnboardingTask(id=tid, employeeId=employee.id, title=vocab.title(rng), dueDate=vocab.date(rng))
    state.onboarding[tid] = task
    calls = [
        _search(value, True),
        _bound("list_onboarding_tasks", {"employeeId": None}),
        PlannedCall("complete_onboarding_task", {"taskId": None}, bind={"taskId": (1, ("tasks", 0, "id"))}),
    ]
    crit = expect_record(
        "onboarding",
        f"the onboarding task '{task.title}' of {value} is done",
        id=tid,
        employeeId=employee.id,
        done=True,
    )
    return ActionPlan(calls, [crit], "mark that person's onboarding task as done in hr")


def _plant_request_leave(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, name=value)
    kind = rng.choice(("vacation", "unpaid"))
    month, day = vocab.date(rng)[5:7], rng.randint(1, 20)
    start, end = f"2026-{month}-{day:02d}", f"2026-{month}-{day + rng.randint(1, 7):02d}"
    arguments = {"employeeId": None, "kind": kind, "startDate": start, "endDate": end}
    calls = [_search(value, True), _bound("request_leave", arguments)]
    crit = expect_record(
        "leave_requests",
        f"{value} has a pending {kind} leave request from {start} to {end}",
        employeeId=employee.id,
        kind=kind,
        startDate=start,
        endDate=end,
        status="pending",
    )
    return ActionPlan(
        calls,
        [crit],
        f"file {'an' if kind[0] in 'aeiou' else 'a'} {kind} leave request in hr for that person from {start} to {end}",
    )


def _plant_terminate(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    _drop_employees(state, value)
    employee = _new_employee(state, rng, email=value)
    calls = [_search(value, True), _bound("terminate_employee", {"employeeId": None})]
    crit = expect_record(
        "employees",
        f"the employee with the email {value} is terminated",
        id=employee.id,
        email=value,
        status="terminated",
    )
    return ActionPlan(calls, [crit], "terminate the employee with that email address in hr")


def _plant_hire(state: HrState, rng: random.Random, value: str) -> ActionPlan:
    name = vocab.unique(rng, vocab.person_name, {e.name for e in state.employees.values()})
    email = vocab.email_for(name, rng)
    _drop_employees(state, name)
    _drop_employees(state, email)
    dep = rng.choice([d for d in state.departments.values() if d.name in DEPARTMENTS])
    if sum(d.city.lower() == dep.city.lower() for d in state.departments.values()) > 1:
        dep.city = _free_city(state, rng)
    job = rng.choice(JOBS)
    arguments = {
        "name": name,
        "email": email,
        "departmentId": None,
        "jobTitle": job,
        "startDate": value,
    }
    calls = [
        PlannedCall("list_departments", {"city": dep.city}),
        PlannedCall(
            "hire_employee",
            arguments,
            inputs={"startDate": "{value}"},
            bind={"departmentId": (0, ("departments", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "employees",
        f"{name} is hired as {job} in {dep.name}, starting {value}",
        name=name,
        email=email,
        departmentId=dep.id,
        jobTitle=job,
        startDate=value,
        status="active",
    )
    phrase = f"hire {name} ({email}) in hr as {job} in the {dep.name} department, starting on that date"
    return ActionPlan(calls, [crit], phrase)


register_service(HrService)

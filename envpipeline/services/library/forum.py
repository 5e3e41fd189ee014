"""Forum service (Reddit-like): subreddits, posts, comments, votes and pinned posts."""

from __future__ import annotations

import random
from typing import Annotated, Literal

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

ME = "me"
TODAY = "2026-05-15"
SUFFIXES = ("dev", "ops", "talk", "hub", "club", "travel")


class Subreddit(Record):
    id: str
    name: str
    description: str = ""
    subscribers: int = 0
    subscribed: bool = False


class Post(Record):
    id: str
    subredditId: str
    title: str
    body: str = ""
    author: str
    date: str
    score: int = 1
    myVote: int = 0
    pinned: bool = False
    locked: bool = False


class Comment(Record):
    id: str
    postId: str
    author: str
    body: str
    date: str
    score: int = 1
    myVote: int = 0


class ForumState(Strict):
    subreddits: dict[str, Subreddit] = {}
    posts: dict[str, Post] = {}
    comments: dict[str, Comment] = {}


class ListSubredditsArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in subreddit name and description")] = None


class SubredditIdArgs(ToolArgs):
    subredditId: Annotated[str, Field(description="subreddit id")]


class ListPostsArgs(ToolArgs):
    subredditId: Annotated[str, Field(description="subreddit id")]
    sort: Annotated[Literal["new", "top"], Field(description="new (latest first) or top (highest score)")] = (
        "new"
    )
    pinnedOnly: Annotated[bool, Field(description="only pinned posts")] = False
    maxResults: Annotated[int, Field(description="maximum posts to return", ge=1, le=100)] = 25


class PostIdArgs(ToolArgs):
    postId: Annotated[str, Field(description="post id")]


class SearchPostsArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in post title, body and author")]
    subredditId: Annotated[str | None, Field(description="restrict to one subreddit")] = None


class CreatePostArgs(ToolArgs):
    subredditId: Annotated[str, Field(description="subreddit id")]
    title: Annotated[str, Field(description="post title")]
    body: Annotated[str, Field(description="post text")] = ""


class CommentArgs(ToolArgs):
    postId: Annotated[str, Field(description="post id")]
    body: Annotated[str, Field(description="comment text")]


class VoteArgs(ToolArgs):
    postId: Annotated[str, Field(description="post id")]
    direction: Annotated[int, Field(description="1 upvote, -1 downvote, 0 clear your vote", ge=-1, le=1)]


class VoteCommentArgs(ToolArgs):
    commentId: Annotated[str, Field(description="comment id")]
    direction: Annotated[int, Field(description="1 upvote, -1 downvote, 0 clear your vote", ge=-1, le=1)]


class SubscribeArgs(ToolArgs):
    subredditId: Annotated[str, Field(description="subreddit id")]
    subscribed: Annotated[bool, Field(description="true to join, false to leave")] = True


def _apply_vote(item: Post | Comment, direction: int) -> None:
    if item.myVote == direction:
        raise conflict(f"your vote on {item.id} is already {direction}")
    item.score += direction - item.myVote
    item.myVote = direction


class ForumService(Service[ForumState]):
    name = "forum"
    title = "Forum"
    domain = "social"

    @classmethod
    def generate_state(cls, rng: random.Random) -> ForumState:
        subs: dict[str, Subreddit] = {}
        names: set[str] = set()
        for _ in range(rng.randint(3, 5)):
            name = vocab.unique(rng, lambda r: f"{r.choice(vocab.WORDS)}{r.choice(SUFFIXES)}", names)
            sid = next_id("sub", subs)
            subs[sid] = Subreddit(
                id=sid,
                name=name,
                description=f"Discussion about {rng.choice(vocab.TOPICS).lower()}.",
                subscribers=rng.randint(50, 90000),
                subscribed=rng.random() < 0.5,
            )
        posts: dict[str, Post] = {}
        for i in range(rng.randint(5, 9)):
            pid = next_id("post", posts)
            posts[pid] = Post(
                id=pid,
                subredditId=rng.choice(list(subs)),
                title=vocab.title(rng),
                body=vocab.sentence(rng),
                author=vocab.person_name(rng),
                date=vocab.date(rng),
                score=rng.randint(0, 400),
                pinned=i == 1,
            )
        comments: dict[str, Comment] = {}
        for _ in range(rng.randint(4, 8)):
            cid = next_id("cmt", comments)
            comments[cid] = Comment(
                id=cid,
                postId=rng.choice(list(posts)),
                author=vocab.person_name(rng),
                body=vocab.sentence(rng),
                date=vocab.date(rng),
                score=rng.randint(0, 60),
            )
        return ForumState(subreddits=subs, posts=posts, comments=comments)

    def _sub(self, sub_id: str) -> Subreddit:
        sub = self.state.subreddits.get(sub_id)
        if sub is None:
            raise not_found("subreddit", sub_id)
        return sub

    def _post(self, post_id: str) -> Post:
        post = self.state.posts.get(post_id)
        if post is None:
            raise not_found("post", post_id)
        return post

    @tool(writes=False)
    def list_subreddits(self, args: ListSubredditsArgs) -> dict:
        """List subreddits, optionally those whose name or description contains a text."""
        q = (args.query or "").lower().strip()
        found = [s for s in self.state.subreddits.values() if q in f"{s.name} {s.description}".lower()]
        return {"subreddits": [dump(s) for s in found]}

    @tool(writes=False)
    def get_subreddit(self, args: SubredditIdArgs) -> dict:
        """Get one subreddit with its pinned posts."""
        sub = self._sub(args.subredditId)
        pinned = [dump(p) for p in self.state.posts.values() if p.subredditId == sub.id and p.pinned]
        return {"subreddit": dump(sub), "pinnedPosts": pinned}

    @tool(writes=False)
    def list_posts(self, args: ListPostsArgs) -> dict:
        """List a subreddit's posts, pinned first, then by newest or top score."""
        self._sub(args.subredditId)
        found = [
            p
            for p in self.state.posts.values()
            if p.subredditId == args.subredditId and (p.pinned or not args.pinnedOnly)
        ]
        key = (lambda p: p.date) if args.sort == "new" else (lambda p: p.score)
        found.sort(key=key, reverse=True)
        found.sort(key=lambda p: not p.pinned)
        return {"posts": [dump(p) for p in found[: args.maxResults]]}

    @tool(writes=False)
    def get_post(self, args: PostIdArgs) -> dict:
        """Get one post with its comments."""
        post = self._post(args.postId)
        comments = [dump(c) for c in self.state.comments.values() if c.postId == post.id]
        return {"post": dump(post), "comments": comments}

    @tool(writes=False)
    def search_posts(self, args: SearchPostsArgs) -> dict:
        """Search posts by text in title, body or author, optionally in one subreddit."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        if args.subredditId is not None:
            self._sub(args.subredditId)
        hits = [
            p
            for p in self.state.posts.values()
            if q in _post_text(p) and args.subredditId in (None, p.subredditId)
        ]
        return {"posts": [dump(p) for p in hits]}

    @tool(writes=True)
    def create_post(self, args: CreatePostArgs) -> dict:
        """Submit a new post to a subreddit."""
        self._sub(args.subredditId)
        if not args.title.strip():
            raise bad_request("title must not be empty")
        pid = next_id("post", self.state.posts)
        post = Post(
            id=pid, subredditId=args.subredditId, title=args.title, body=args.body, author=ME, date=TODAY
        )
        post.myVote = 1
        self.state.posts[pid] = post
        return {"post": dump(post)}

    @tool(writes=True)
    def comment(self, args: CommentArgs) -> dict:
        """Comment on a post (not allowed on locked posts)."""
        post = self._post(args.postId)
        if post.locked:
            raise conflict(f"post {post.id} is locked")
        if not args.body.strip():
            raise bad_request("body must not be empty")
        cid = next_id("cmt", self.state.comments)
        self.state.comments[cid] = Comment(
            id=cid, postId=post.id, author=ME, body=args.body, date=TODAY, myVote=1
        )
        return {"comment": dump(self.state.comments[cid])}

    @tool(writes=True)
    def vote(self, args: VoteArgs) -> dict:
        """Upvote, downvote or clear your vote on a post."""
        post = self._post(args.postId)
        _apply_vote(post, args.direction)
        return {"post": dump(post)}

    @tool(writes=True)
    def vote_comment(self, args: VoteCommentArgs) -> dict:
        """Upvote, downvote or clear your vote on a comment."""
        comment = self.state.comments.get(args.commentId)
        if comment is None:
            raise not_found("comment", args.commentId)
        _apply_vote(comment, args.direction)
        return {"comment": dump(comment)}

    @tool(writes=True)
    def pin_post(self, args: PostIdArgs) -> dict:
        """Pin a post to the top of its subreddit (moderator action)."""
        post = self._post(args.postId)
        if post.pinned:
            raise conflict(f"post {post.id} is already pinned")
        post.pinned = True
        return {"post": dump(post)}

    @tool(writes=True)
    def unpin_post(self, args: PostIdArgs) -> dict:
        """Unpin a pinned post."""
        post = self._post(args.postId)
        if not post.pinned:
            raise conflict(f"post {post.id} is not pinned")
        post.pinned = False
        return {"post": dump(post)}

    @tool(writes=True)
    def lock_post(self, args: PostIdArgs) -> dict:
        """Lock a post so it accepts no new comments (moderator action)."""
        post = self._post(args.postId)
        if post.locked:
            raise conflict(f"post {post.id} is already locked")
        post.locked = True
        return {"post": dump(post)}

    @tool(writes=True)
    def delete_post(self, args: PostIdArgs) -> dict:
        """Delete a post and its comments."""
        post = self._post(args.postId)
        _remove_posts(self.state, {post.id})
        return {"deleted": post.id}

    @tool(writes=True)
    def subscribe(self, args: SubscribeArgs) -> dict:
        """Join (or leave, with subscribed=false) a subreddit."""
        sub = self._sub(args.subredditId)
        if sub.subscribed == args.subscribed:
            raise conflict(
                f"already {'subscribed to' if sub.subscribed else 'not subscribed to'} r/{sub.name}"
            )
        sub.subscribed = args.subscribed
        sub.subscribers += 1 if args.subscribed else -1
        return {"subreddit": dump(sub)}

    @classmethod
    def example_arguments(cls, state: ForumState) -> dict[str, dict]:
        sub = next(iter(state.subreddits.values()))
        post = next(iter(state.posts.values()))
        comment = next(iter(state.comments.values()))
        return {
            "list_subreddits": {"query": sub.name[:4]},
            "get_subreddit": {"subredditId": sub.id},
            "list_posts": {"subredditId": post.subredditId, "sort": "top"},
            "get_post": {"postId": post.id},
            "search_posts": {"query": post.title.split()[0], "subredditId": post.subredditId},
            "create_post": {"subredditId": sub.id, "title": "Weekly thread", "body": "Say hi!"},
            "comment": {"postId": post.id, "body": "Great write-up."},
            "vote": {"postId": post.id, "direction": 1},
            "vote_comment": {"commentId": comment.id, "direction": -1},
            "pin_post": {"postId": post.id},
            "unpin_post": {"postId": next((p.id for p in state.posts.values() if p.pinned), post.id)},
            "lock_post": {"postId": post.id},
            "delete_post": {"postId": post.id},
            "subscribe": {"subredditId": sub.id, "subscribed": not sub.subscribed},
        }

    @classmethod
    def links(cls) -> list[Link[ForumState]]:
        return [
            Hop(
                "post_author",
                "title",
                "person",
                _plant_post_author,
                relation="the author of the forum post titled {of}",
            ),
            Hop(
                "city_pinned_post",
                "city",
                "title",
                _plant_city_pinned,
                relation="the title of the pinned post in the forum community for {of}",
            ),
            Hop(
                "person_post_date",
                "person",
                "date",
                _plant_person_post_date,
                relation="the date of the forum post written by {of}",
            ),
            Action("comment_on_post", "title", _plant_comment),
            Action("pin_person_post", "person", _plant_pin),
            Action("post_about_city", "city", _plant_city_post),
            Action("upvote_person_post", "person", _plant_upvote),
            Action("lock_post", "title", _plant_lock),
            Action("delete_person_post", "person", _plant_delete),
            Action("unpin_city_post", "city", _plant_unpin_city),
            Action("join_post_community", "title", _plant_join),
            Action("upvote_comment", "title", _plant_upvote_comment),
        ]


def _post_text(p: Post) -> str:
    return f"{p.title} {p.body} {p.author}".lower()


def _remove_posts(state: ForumState, post_ids: set[str]) -> None:
    for pid in post_ids:
        state.posts.pop(pid, None)
    for cid in [c.id for c in state.comments.values() if c.postId in post_ids]:
        del state.comments[cid]


def _drop_posts(state: ForumState, text: str) -> None:
    """Make a lookup unambiguous: remove posts (and their comments) mentioning `text`."""
    low = text.lower()
    _remove_posts(state, {p.id for p in state.posts.values() if low in _post_text(p)})


def _plant_post(state: ForumState, rng: random.Random, **fields) -> Post:
    fields.setdefault("subredditId", next(iter(state.subreddits)))
    fields.setdefault("title", vocab.title(rng))
    fields.setdefault("author", vocab.person_name(rng))
    fields.setdefault("date", vocab.date(rng))
    pid = next_id("post", state.posts)
    post = Post(id=pid, body=vocab.sentence(rng), score=rng.randint(1, 300), **fields)
    state.posts[pid] = post
    return post


def _plant_post_author(state: ForumState, rng: random.Random, value: str) -> HopPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, title=value)
    return query_hop(
        "search_posts",
        value,
        ("posts", 0, "author"),
        post.author,
        "find the forum post with that title and note the name of its author",
    )


def _city_community(state: ForumState, value: str) -> str:
    """A fresh community for the city `value` (no other community mentions it); returns its id."""
    low = value.lower()
    gone = {s.id for s in state.subreddits.values() if low in f"{s.name} {s.description}".lower()}
    for sid in gone:
        del state.subreddits[sid]
    _remove_posts(state, {p.id for p in state.posts.values() if p.subredditId in gone})
    sid = next_id("sub", state.subreddits)
    name = value.lower().replace(" ", "") + "locals"
    state.subreddits[sid] = Subreddit(
        id=sid, name=name, description=f"News and meetups for people living in {value}.", subscribers=1200
    )
    return sid


def _plant_city_pinned(state: ForumState, rng: random.Random, value: str) -> HopPlan:
    sid = _city_community(state, value)
    _plant_post(state, rng, subredditId=sid)
    pinned = _plant_post(state, rng, subredditId=sid, pinned=True)
    calls = [
        PlannedCall("list_subreddits", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_posts",
            {"subredditId": None, "pinnedOnly": True},
            bind={"subredditId": (0, ("subreddits", 0, "id"))},
            reveals=("posts", 0, "title"),
        ),
    ]
    return HopPlan(
        calls, pinned.title, "open the forum community for that city and note the title of its pinned post"
    )


def _plant_person_post_date(state: ForumState, rng: random.Random, value: str) -> HopPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, author=value)
    return query_hop(
        "search_posts",
        value,
        ("posts", 0, "date"),
        post.date,
        "find the forum post written by that person and note the date it was posted",
    )


def _plant_comment(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, title=value)
    body = f"Following this, see {vocab.code(rng, 'REF')}."
    calls = [
        PlannedCall("search_posts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("comment", {"postId": None, "body": body}, bind={"postId": (0, ("posts", 0, "id"))}),
    ]
    crit = expect_record(
        "comments", f"the post '{value}' has the comment '{body}'", postId=post.id, body=body
    )
    return ActionPlan(calls, [crit], f"comment '{body}' on the forum post with that title")


def _plant_pin(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    _plant_post(state, rng, author=value)
    calls = [
        PlannedCall("search_posts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("pin_post", {"postId": None}, bind={"postId": (0, ("posts", 0, "id"))}),
    ]
    crit = expect_record("posts", f"the post by {value} is pinned", author=value, pinned=True)
    return ActionPlan(calls, [crit], "pin the forum post written by that person")


def _plant_city_post(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    sub = next(iter(state.subreddits.values()))
    title = f"Meetup in {value}"
    calls = [
        PlannedCall("list_subreddits", {"query": sub.name}),
        PlannedCall(
            "create_post",
            {"subredditId": None, "title": title, "body": "Who is in?"},
            inputs={"title": "Meetup in {value}"},
            bind={"subredditId": (0, ("subreddits", 0, "id"))},
        ),
    ]
    crit = expect_record("posts", f"r/{sub.name} has the post '{title}'", subredditId=sub.id, title=title)
    return ActionPlan(
        calls,
        [crit],
        f"create a post in the r/{sub.name} forum titled 'Meetup in ' followed by that city's name",
    )


def _post_action(tool_name: str, value: str, arguments: dict | None = None) -> list[PlannedCall]:
    """Find the one post matching the carried value, then call `tool_name` on it."""
    return [
        PlannedCall("search_posts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            tool_name, {"postId": None, **(arguments or {})}, bind={"postId": (0, ("posts", 0, "id"))}
        ),
    ]


def _plant_upvote(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, author=value)
    crit = expect_record("posts", f"the post by {value} has your upvote", id=post.id, author=value, myVote=1)
    return ActionPlan(
        _post_action("vote", value, {"direction": 1}), [crit], "upvote the forum post written by that person"
    )


def _plant_lock(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, title=value)
    crit = expect_record("posts", f"the post '{value}' is locked", id=post.id, title=value, locked=True)
    return ActionPlan(
        _post_action("lock_post", value),
        [crit],
        "lock the forum post with that title so it takes no new comments",
    )


def _plant_delete(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, author=value)
    crit = expect_record("posts", f"the post by {value} is deleted", absent=True, id=post.id, author=value)
    return ActionPlan(
        _post_action("delete_post", value), [crit], "delete the forum post written by that person"
    )


def _plant_unpin_city(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    sid = _city_community(state, value)
    _plant_post(state, rng, subredditId=sid)
    pinned = _plant_post(state, rng, subredditId=sid, pinned=True)
    calls = [
        PlannedCall("list_subreddits", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "get_subreddit", {"subredditId": None}, bind={"subredditId": (0, ("subreddits", 0, "id"))}
        ),
        PlannedCall("unpin_post", {"postId": None}, bind={"postId": (1, ("pinnedPosts", 0, "id"))}),
    ]
    crit = expect_record(
        "posts",
        f"the post '{pinned.title}' is no longer pinned",
        id=pinned.id,
        title=pinned.title,
        pinned=False,
    )
    return ActionPlan(calls, [crit], "unpin the pinned post of the forum community for that city")


def _plant_join(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    taken = {s.name for s in state.subreddits.values()}
    name = vocab.unique(rng, lambda r: f"{r.choice(vocab.WORDS)}{r.choice(SUFFIXES)}", taken)
    sid = next_id("sub", state.subreddits)
    state.subreddits[sid] = Subreddit(
        id=sid,
        name=name,
        description=f"Discussion about {rng.choice(vocab.TOPICS).lower()}.",
        subscribers=rng.randint(50, 9000),
    )
    _plant_post(state, rng, subredditId=sid, title=value)
    calls = [
        PlannedCall("search_posts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "subscribe",
            {"subredditId": None, "subscribed": True},
            bind={"subredditId": (0, ("posts", 0, "subredditId"))},
        ),
    ]
    crit = expect_record("subreddits", f"you are subscribed to r/{name}", id=sid, name=name, subscribed=True)
    return ActionPlan(calls, [crit], "join the forum community where the post with that title was posted")


def _plant_upvote_comment(state: ForumState, rng: random.Random, value: str) -> ActionPlan:
    _drop_posts(state, value)
    post = _plant_post(state, rng, title=value)
    for cid in [c.id for c in state.comments.values() if c.postId == post.id]:
        del state.comments[cid]
    cid = next_id("cmt", state.comments)
    state.comments[cid] = Comment(
        id=cid,
        postId=post.id,
        author=vocab.person_name(rng),
        body=vocab.sentence(rng),
        date=vocab.date(rng),
        score=rng.randint(0, 60),
    )
    calls = [
        PlannedCall("search_posts", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("get_post", {"postId": None}, bind={"postId": (0, ("posts", 0, "id"))}),
        PlannedCall(
            "vote_comment",
            {"commentId": None, "direction": 1},
            bind={"commentId": (1, ("comments", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "comments", f"the comment on '{value}' has your upvote", id=cid, postId=post.id, myVote=1
    )
    return ActionPlan(calls, [crit], "upvote the only comment on the forum post with that title")


register_service(ForumService)

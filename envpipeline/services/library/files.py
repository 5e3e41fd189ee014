"""Files service (cloud drive): a virtual file system of folders and files with sharing and search."""

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

FOLDERS = ("Documents", "Projects", "Finance", "Travel", "Photos", "Reports")
EXTENSIONS = (".docx", ".txt", ".pdf", ".xlsx", ".md")
TODAY = "2026-06-15"


class Folder(Record):
    id: str
    name: str
    parentId: str | None = None


class File(Record):
    id: str
    name: str
    folderId: str
    content: str = ""
    owner: str
    modified: str
    sharedWith: list[str] = []


class FilesState(Strict):
    folders: dict[str, Folder] = {}
    files: dict[str, File] = {}


class ListFoldersArgs(ToolArgs):
    parentId: Annotated[str | None, Field(description="only sub-folders of this folder")] = None


class CreateFolderArgs(ToolArgs):
    name: Annotated[str, Field(description="folder name")]
    parentId: Annotated[str | None, Field(description="parent folder id (default: top level)")] = None


class FolderIdArgs(ToolArgs):
    folderId: Annotated[str, Field(description="folder id")]


class ListFilesArgs(ToolArgs):
    folderId: Annotated[str | None, Field(description="only files in this folder")] = None


class FileIdArgs(ToolArgs):
    fileId: Annotated[str, Field(description="file id")]


class SearchFilesArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in file names and contents")]


class SharedWithArgs(ToolArgs):
    email: Annotated[str, Field(description="email address the files are shared with")]


class CreateFileArgs(ToolArgs):
    name: Annotated[str, Field(description="file name")]
    folderId: Annotated[str, Field(description="folder to create the file in")]
    content: Annotated[str, Field(description="text content")] = ""


class WriteFileArgs(ToolArgs):
    fileId: Annotated[str, Field(description="file id")]
    content: Annotated[str, Field(description="new text content (replaces the old one)")]


class RenameFileArgs(ToolArgs):
    fileId: Annotated[str, Field(description="file id")]
    name: Annotated[str, Field(description="new file name")]


class MoveFileArgs(ToolArgs):
    fileId: Annotated[str, Field(description="file id")]
    folderId: Annotated[str, Field(description="destination folder id")]


class ShareArgs(ToolArgs):
    fileId: Annotated[str, Field(description="file id")]
    email: Annotated[str, Field(description="email address to share with / stop sharing with")]


class FilesService(Service[FilesState]):
    name = "files"
    title = "Cloud Drive"
    domain = "productivity"

    @classmethod
    def generate_state(cls, rng: random.Random) -> FilesState:
        folders: dict[str, Folder] = {}
        for name in rng.sample(FOLDERS, rng.randint(3, 5)):
            fid = next_id("fld", folders)
            folders[fid] = Folder(id=fid, name=name)
        archive = next_id("fld", folders)
        folders[archive] = Folder(id=archive, name="Archive")
        owner = vocab.person_name(rng)
        files: dict[str, File] = {}
        names: set[str] = set()
        full = [f for f in folders if f != archive]
        for i in range(rng.randint(4, 9)):
            fid = next_id("fil", files)
            name = vocab.unique(rng, lambda r: vocab.title(r) + r.choice(EXTENSIONS), names)
            shared = [
                vocab.email_for(vocab.person_name(rng), rng) for _ in range(rng.randint(0 if i else 1, 2))
            ]
            files[fid] = File(
                id=fid,
                name=name,
                folderId=rng.choice(full),
                content=vocab.sentence(rng),
                owner=owner,
                modified=vocab.date(rng),
                sharedWith=shared,
            )
        return FilesState(folders=folders, files=files)

    def _folder(self, folder_id: str) -> Folder:
        folder = self.state.folders.get(folder_id)
        if folder is None:
            raise not_found("folder", folder_id)
        return folder

    def _file(self, file_id: str) -> File:
        file = self.state.files.get(file_id)
        if file is None:
            raise not_found("file", file_id)
        return file

    def _check_free(self, name: str, folder_id: str) -> None:
        if not name.strip():
            raise bad_request("name must not be empty")
        if any(f.name.lower() == name.lower() and f.folderId == folder_id for f in self.state.files.values()):
            raise conflict(f"a file named '{name}' already exists in folder {folder_id}")

    @tool(writes=False)
    def list_folders(self, args: ListFoldersArgs) -> dict:
        """List folders; top-level ones by default, or the sub-folders of one folder."""
        if args.parentId is not None:
            self._folder(args.parentId)
        return {"folders": [dump(f) for f in self.state.folders.values() if f.parentId == args.parentId]}

    @tool(writes=True)
    def create_folder(self, args: CreateFolderArgs) -> dict:
        """Create a folder, at the top level or inside another folder."""
        if args.parentId is not None:
            self._folder(args.parentId)
        if not args.name.strip():
            raise bad_request("name must not be empty")
        if any(
            f.name.lower() == args.name.lower() and f.parentId == args.parentId
            for f in self.state.folders.values()
        ):
            raise conflict(f"a folder named '{args.name}' already exists there")
        fid = next_id("fld", self.state.folders)
        folder = Folder(id=fid, name=args.name, parentId=args.parentId)
        self.state.folders[fid] = folder
        return {"folder": dump(folder)}

    @tool(writes=True)
    def delete_folder(self, args: FolderIdArgs) -> dict:
        """Delete an empty folder (no files, no sub-folders)."""
        folder = self._folder(args.folderId)
        if any(f.folderId == folder.id for f in self.state.files.values()) or any(
            f.parentId == folder.id for f in self.state.folders.values()
        ):
            raise conflict(f"folder '{folder.name}' is not empty")
        del self.state.folders[folder.id]
        return {"deleted": folder.id}

    @tool(writes=False)
    def list_files(self, args: ListFilesArgs) -> dict:
        """List files, optionally only those in one folder."""
        if args.folderId is not None:
            self._folder(args.folderId)
        hits = [f for f in self.state.files.values() if args.folderId is None or f.folderId == args.folderId]
        return {"files": [dump(f) for f in hits]}

    @tool(writes=False)
    def get_file(self, args: FileIdArgs) -> dict:
        """Get one file by id, including its content."""
        return {"file": dump(self._file(args.fileId))}

    @tool(writes=False)
    def search_files(self, args: SearchFilesArgs) -> dict:
        """Search files by text in their name or content."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [f for f in self.state.files.values() if q in f"{f.name} {f.content}".lower()]
        return {"files": [dump(f) for f in hits]}

    @tool(writes=False)
    def list_shared_with(self, args: SharedWithArgs) -> dict:
        """List the files shared with one email address."""
        email = args.email.strip().lower()
        if "@" not in email:
            raise bad_request(f"invalid email '{args.email}'")
        hits = [f for f in self.state.files.values() if email in (s.lower() for s in f.sharedWith)]
        return {"files": [dump(f) for f in hits]}

    @tool(writes=True)
    def create_file(self, args: CreateFileArgs) -> dict:
        """Create a text file in a folder; names are unique within a folder."""
        self._folder(args.folderId)
        self._check_free(args.name, args.folderId)
        fid = next_id("fil", self.state.files)
        owner = next((f.owner for f in self.state.files.values()), "me")
        file = File(
            id=fid, name=args.name, folderId=args.folderId, content=args.content, owner=owner, modified=TODAY
        )
        self.state.files[fid] = file
        return {"file": dump(file)}

    @tool(writes=True)
    def write_file(self, args: WriteFileArgs) -> dict:
        """Replace the content of a file."""
        file = self._file(args.fileId)
        file.content = args.content
        file.modified = TODAY
        return {"file": dump(file)}

    @tool(writes=True)
    def rename_file(self, args: RenameFileArgs) -> dict:
        """Rename a file; the new name must be free in its folder."""
        file = self._file(args.fileId)
        self._check_free(args.name, file.folderId)
        file.name = args.name
        return {"file": dump(file)}

    @tool(writes=True)
    def move_file(self, args: MoveFileArgs) -> dict:
        """Move a file into another folder."""
        file = self._file(args.fileId)
        folder = self._folder(args.folderId)
        if file.folderId == folder.id:
            raise conflict(f"file '{file.name}' is already in '{folder.name}'")
        self._check_free(file.name, folder.id)
        file.folderId = folder.id
        return {"file": dump(file)}

    @tool(writes=True)
    def share_file(self, args: ShareArgs) -> dict:
        """Share a file with an email address."""
        file = self._file(args.fileId)
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        if args.email.lower() in (s.lower() for s in file.sharedWith):
            raise conflict(f"'{file.name}' is already shared with {args.email}")
        file.sharedWith.append(args.email)
        return {"file": dump(file)}

    @tool(writes=True)
    def unshare_file(self, args: ShareArgs) -> dict:
        """Stop sharing a file with an email address."""
        file = self._file(args.fileId)
        if args.email not in file.sharedWith:
            raise not_found("share", args.email)
        file.sharedWith.remove(args.email)
        return {"file": dump(file)}

    @tool(writes=True)
    def delete_file(self, args: FileIdArgs) -> dict:
        """Delete a file."""
        self._file(args.fileId)
        del self.state.files[args.fileId]
        return {"deleted": args.fileId}

    @classmethod
    def example_arguments(cls, state: FilesState) -> dict[str, dict]:
        file = next(iter(state.files.values()))
        empty = next(
            f for f in state.folders.values() if not any(x.folderId == f.id for x in state.files.values())
        )
        other = next(f for f in state.folders.values() if f.id != file.folderId)
        email = file.sharedWith[0]
        return {
            "list_folders": {},
            "create_folder": {"name": "Receipts", "parentId": file.folderId},
            "delete_folder": {"folderId": empty.id},
            "list_files": {"folderId": file.folderId},
            "get_file": {"fileId": file.id},
            "search_files": {"query": file.name.split()[0]},
            "list_shared_with": {"email": email},
            "create_file": {"name": "todo.txt", "folderId": file.folderId, "content": "buy milk"},
            "write_file": {"fileId": file.id, "content": "rewritten"},
            "rename_file": {"fileId": file.id, "name": "renamed.txt"},
            "move_file": {"fileId": file.id, "folderId": other.id},
            "share_file": {"fileId": file.id, "email": "new.person@example.com"},
            "unshare_file": {"fileId": file.id, "email": email},
            "delete_file": {"fileId": file.id},
        }

    @classmethod
    def links(cls) -> list[Link[FilesState]]:
        return [
            Hop(
                "file_owner",
                "title",
                "person",
                _plant_file_owner,
                relation="the owner of the file named {of}",
            ),
            Hop(
                "file_shared_with",
                "email",
                "title",
                _plant_shared_file,
                relation="the name of the file shared with {of}",
            ),
            Hop(
                "file_containing_code",
                "ticket_code",
                "title",
                _plant_code_file,
                relation="the name of the file that mentions {of}",
            ),
            Hop(
                "file_modified",
                "title",
                "date",
                _plant_file_modified,
                relation="the last-modified date of the file named {of}",
            ),
            Hop(
                "folder_file_owner",
                "title",
                "person",
                _plant_folder_file_owner,
                relation="the owner of the file kept in the folder named {of}",
            ),
            Action("archive_file", "title", _plant_archive),
            Action("share_file", "email", _plant_share),
            Action("delete_file_by_title", "title", _plant_delete_file),
            Action("rename_file_to_title", "title", _plant_rename),
            Action("unshare_file_email", "email", _plant_unshare),
            Action("create_city_folder", "city", _plant_city_folder),
            Action("create_handover_file", "person", _plant_handover_file),
            Action("record_code_in_file", "code", _plant_write_code),
            Action("delete_empty_folder", "title", _plant_delete_folder),
        ]


def _drop_files(state: FilesState, text: str) -> None:
    low = text.lower()
    for fid in [f.id for f in state.files.values() if low in f"{f.name} {f.content}".lower()]:
        del state.files[fid]


def _new_file(state: FilesState, rng: random.Random, **fields) -> File:
    folders = [f.id for f in state.folders.values() if f.name != "Archive" and f.name in FOLDERS]
    if not folders:
        folders = [next_id("fld", state.folders)]
        state.folders[folders[0]] = Folder(id=folders[0], name="Documents")
    fid = next_id("fil", state.files)
    fields.setdefault("content", vocab.sentence(rng))
    fields.setdefault("owner", vocab.person_name(rng))
    fields.setdefault("modified", vocab.date(rng))
    file = File(id=fid, folderId=rng.choice(folders), **fields)
    state.files[fid] = file
    return file


def _fresh_title(state: FilesState, rng: random.Random) -> str:
    """A new title no file mentions yet (files planted earlier in a task are kept)."""
    name = vocab.fresh(
        rng,
        vocab.title,
        lambda text: any(text.lower() in f"{f.name} {f.content}".lower() for f in state.files.values()),
    )
    _drop_files(state, name)
    return name


def _plant_file_owner(state: FilesState, rng: random.Random, value: str) -> HopPlan:
    _drop_files(state, value)
    file = _new_file(state, rng, name=value)
    return query_hop(
        "search_files",
        value,
        ("files", 0, "owner"),
        file.owner,
        "find the file with that title in the cloud drive and note who owns it",
    )


def _plant_file_modified(state: FilesState, rng: random.Random, value: str) -> HopPlan:
    _drop_files(state, value)
    file = _new_file(state, rng, name=value)
    return query_hop(
        "search_files",
        value,
        ("files", 0, "modified"),
        file.modified,
        "find the file with that title in the cloud drive and note the date it was last modified",
    )


def _plant_shared_file(state: FilesState, rng: random.Random, value: str) -> HopPlan:
    for file in state.files.values():
        file.sharedWith = [s for s in file.sharedWith if s.lower() != value.lower()]
    file = _new_file(state, rng, name=_fresh_title(state, rng), sharedWith=[value])
    call = PlannedCall(
        "list_shared_with", {"email": value}, inputs={"email": "{value}"}, reveals=("files", 0, "name")
    )
    return HopPlan(
        [call], file.name, "find the file in the cloud drive shared with that email address and note its name"
    )


def _plant_code_file(state: FilesState, rng: random.Random, value: str) -> HopPlan:
    _drop_files(state, value)
    content = f"Reference {value}. {vocab.sentence(rng)}"
    file = _new_file(state, rng, name=_fresh_title(state, rng), content=content)
    return query_hop(
        "search_files",
        value,
        ("files", 0, "name"),
        file.name,
        "search the cloud drive for the file that mentions that ticket code and note its name",
    )


def _archive_folder(state: FilesState) -> Folder:
    for folder in state.folders.values():
        if folder.name == "Archive":
            return folder
    fid = next_id("fld", state.folders)
    state.folders[fid] = Folder(id=fid, name="Archive")
    return state.folders[fid]


def _plant_archive(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_files(state, value)
    archive = _archive_folder(state)
    _new_file(state, rng, name=value)
    calls = [
        PlannedCall("search_files", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "move_file", {"fileId": None, "folderId": archive.id}, bind={"fileId": (0, ("files", 0, "id"))}
        ),
    ]
    crit = expect_record(
        "files", f"the file '{value}' is in the Archive folder", name=value, folderId=archive.id
    )
    return ActionPlan(calls, [crit], "move the cloud-drive file with that title into the 'Archive' folder")


def _plant_share(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_title(state, rng)
    _new_file(state, rng, name=name)
    calls = [
        PlannedCall("search_files", {"query": name}),
        PlannedCall(
            "share_file",
            {"fileId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"fileId": (0, ("files", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "files", f"'{name}' is shared with {value}", name=name, sharedWith=("contains", value)
    )
    return ActionPlan(calls, [crit], f"share the cloud-drive file '{name}' with that email address")


def _named_folder(state: FilesState, name: str) -> Folder:
    """The top-level folder called `name`, created when the state has none."""
    for folder in state.folders.values():
        if folder.name == name and folder.parentId is None:
            return folder
    fid = next_id("fld", state.folders)
    state.folders[fid] = Folder(id=fid, name=name)
    return state.folders[fid]


def _drop_folders(state: FilesState, name: str) -> None:
    """Remove folders called `name` (and the files in them) so a folder lookup is unambiguous."""
    gone = {f.id for f in state.folders.values() if f.name.lower() == name.lower()}
    for fid in gone:
        del state.folders[fid]
    for fid in [f.id for f in state.files.values() if f.folderId in gone]:
        del state.files[fid]


def _plant_folder_file_owner(state: FilesState, rng: random.Random, value: str) -> HopPlan:
    _drop_folders(state, value)
    folder = _named_folder(state, value)
    file = _new_file(state, rng, name=_fresh_title(state, rng))
    file.folderId = folder.id
    calls = [
        PlannedCall("list_folders", {}),
        PlannedCall("list_files", {"folderId": folder.id}, reveals=("files", 0, "owner")),
    ]
    phrase = "open the cloud-drive folder named with that title and note who owns the file kept in it"
    return HopPlan(calls, file.owner, phrase)


def _plant_delete_file(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_files(state, value)
    file = _new_file(state, rng, name=value)
    calls = [
        PlannedCall("search_files", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("delete_file", {"fileId": None}, bind={"fileId": (0, ("files", 0, "id"))}),
    ]
    crit = expect_record("files", f"the file '{value}' is deleted", absent=True, id=file.id, name=value)
    return ActionPlan(calls, [crit], "delete the cloud-drive file with that title")


def _plant_rename(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_files(state, value)
    old = _fresh_title(state, rng) + rng.choice(EXTENSIONS)
    file = _new_file(state, rng, name=old)
    calls = [
        PlannedCall("search_files", {"query": old}),
        PlannedCall(
            "rename_file",
            {"fileId": None, "name": value},
            inputs={"name": "{value}"},
            bind={"fileId": (0, ("files", 0, "id"))},
        ),
    ]
    crit = expect_record("files", f"the file '{old}' is renamed to '{value}'", id=file.id, name=value)
    return ActionPlan(calls, [crit], f"rename the cloud-drive file '{old}' to that title")


def _plant_unshare(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_title(state, rng)
    other = vocab.unique(rng, lambda r: vocab.email_for(vocab.person_name(r), r), {value})
    _new_file(state, rng, name=name, sharedWith=[other, value])
    calls = [
        PlannedCall("search_files", {"query": name}),
        PlannedCall(
            "unshare_file",
            {"fileId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"fileId": (0, ("files", 0, "id"))},
        ),
    ]
    gone = expect_record(
        "files",
        f"'{name}' is no longer shared with {value}",
        absent=True,
        name=name,
        sharedWith=("contains", value),
    )
    kept = expect_record(
        "files", f"'{name}' is still shared with {other}", name=name, sharedWith=("contains", other)
    )
    return ActionPlan(
        calls, [gone, kept], f"stop sharing the cloud-drive file '{name}' with that email address"
    )


def _plant_city_folder(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    travel = _named_folder(state, "Travel")
    for fid in [
        f.id for f in state.folders.values() if f.parentId == travel.id and f.name.lower() == value.lower()
    ]:
        del state.folders[fid]
    calls = [
        PlannedCall("list_folders", {}),
        PlannedCall("create_folder", {"name": value, "parentId": travel.id}, inputs={"name": "{value}"}),
    ]
    crit = expect_record(
        "folders", f"a folder '{value}' exists inside 'Travel'", name=value, parentId=travel.id
    )
    return ActionPlan(
        calls, [crit], "create a folder named after that city inside the cloud-drive 'Travel' folder"
    )


def _plant_handover_file(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    folder = _named_folder(state, rng.choice(("Projects", "Documents", "Reports")))
    name = f"Handover {vocab.code(rng, 'HO')}.md"
    _drop_files(state, name)
    calls = [
        PlannedCall("list_folders", {}),
        PlannedCall(
            "create_file",
            {"name": name, "folderId": folder.id, "content": f"Handover owner: {value}"},
            inputs={"content": "Handover owner: {value}"},
        ),
    ]
    crit = expect_record(
        "files",
        f"a file '{name}' in '{folder.name}' names {value}",
        name=name,
        folderId=folder.id,
        content=("icontains", value),
    )
    phrase = f"create a file '{name}' in the cloud-drive '{folder.name}' folder whose text names that person as the handover owner"
    return ActionPlan(calls, [crit], phrase)


def _plant_write_code(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_files(state, value)
    name = _fresh_title(state, rng) + ".txt"
    file = _new_file(state, rng, name=name)
    calls = [
        PlannedCall("search_files", {"query": name}),
        PlannedCall(
            "write_file",
            {"fileId": None, "content": f"Approved under {value}."},
            inputs={"content": "Approved under {value}."},
            bind={"fileId": (0, ("files", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "files", f"the file '{name}' records {value}", id=file.id, name=name, content=("icontains", value)
    )
    phrase = f"replace the text of the cloud-drive file '{name}' with a note that it was approved under that reference code"
    return ActionPlan(calls, [crit], phrase)


def _plant_delete_folder(state: FilesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_folders(state, value)
    folder = _named_folder(state, value)
    calls = [
        PlannedCall("list_folders", {}),
        PlannedCall("delete_folder", {"folderId": folder.id}),
    ]
    crit = expect_record(
        "folders", f"the empty folder '{value}' is deleted", absent=True, id=folder.id, name=value
    )
    return ActionPlan(calls, [crit], "delete the empty cloud-drive folder named with that title")


register_service(FilesService)

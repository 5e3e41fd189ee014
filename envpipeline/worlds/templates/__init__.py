"""Cross-interface task templates, grounded in the world day's data: one module per template.

Each template reads real entities of the day (contacts, in-stock products, orders, confirmation
mail, stand-up messages, home files) and, where the task needs a trigger, seeds it with `setup`
operations that name those entities. Flows:

    chat_goahead_order     mcp>cli>web>cli>mcp   go-ahead in chat -> shortlist -> buy -> note -> DM
    dm_friend_request      mcp>web>mcp           a friend asks by DM -> buy -> DM back number + price
    mail_receipt_expense   web>cli>mcp>web       order mail -> expense file -> email total -> archive
    invite_to_agenda       web>cli>mcp           meeting mail -> agenda note -> confirm by email
    restock_from_note      cli>web>cli>mcp       restock list -> buy -> tick the list -> team chat
    reply_with_file        mcp>cli>web>cli       mail asks for a file -> read it -> reply -> log
    standup_digest         mcp>cli>web           teammate stand-up -> digest file -> email digest
    order_status_followup  cli>web>cli>mcp       todo item -> order status page -> tick -> DM
"""

from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import all_templates, get_template, register_template

__all__ = ["Template", "all_templates", "get_template", "register_template"]

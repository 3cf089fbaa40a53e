"""Per-session protocol logs: a bounded ring of levelled entries (wire traffic, stderr,
lifecycle), one-line summaries of JSON-RPC messages, and the redaction of secrets that every
surface showing agent output (log buffer, export, chat, notifications) goes through.
"""

"""Typed errors with a message that is safe to show to a user.

Every layer raises these; the HTTP layer maps them to a status code in one
place (``web/http_api._error_response``). Anything else that escapes is a bug: it
becomes an opaque 500 and a log line, never its ``str()`` in a page.
"""

from __future__ import annotations

from typing import Optional


class ProfileError(Exception):
    """Base class: ``message`` is shown to the user as is."""

    http_status = 500
    code = "INTERNAL"

    def __init__(self, message: str, details: Optional[dict] = None):
        super().__init__(message)
        self.message = message
        # Extra fields of the JSON error, for a page to act on (e.g. ``tools``: what applies).
        self.details = dict(details or {})


class InvalidArgument(ProfileError):
    """The request or call has a bad or missing parameter."""

    http_status = 400
    code = "INVALID_ARGUMENT"


class NotFound(ProfileError):
    """A run, host, tool or file does not exist (or is outside the logdir)."""

    http_status = 404
    code = "NOT_FOUND"


class PermissionDenied(ProfileError):
    """A file or folder exists but the server's user may not read it."""

    http_status = 403
    code = "PERMISSION_DENIED"


class Forbidden(ProfileError):
    """A request that could come from another site's page is refused (no token, cross-site)."""

    http_status = 403
    code = "FORBIDDEN"


class HostNotAllowed(Forbidden):
    """The request names a host this server does not answer for (DNS rebinding)."""

    code = "HOST_NOT_ALLOWED"


class NotApplicable(ProfileError):
    """The tool exists but has nothing to show for this profile; says why."""

    http_status = 404
    code = "NOT_APPLICABLE"


class CorruptProfile(ProfileError):
    """A profile file cannot be decoded (truncated, corrupt, not an XSpace)."""

    http_status = 422
    code = "CORRUPT_PROFILE"


class ProfileTooLarge(ProfileError):
    """A profile file is past a size limit; the message names it and how to raise it."""

    http_status = 413
    code = "PROFILE_TOO_LARGE"


class Unavailable(ProfileError):
    """A remote profiler could not be reached or returned nothing."""

    http_status = 503
    code = "UNAVAILABLE"


class DeadlineExceeded(ProfileError):
    """A remote call did not finish in time."""

    http_status = 504
    code = "DEADLINE_EXCEEDED"


class Overloaded(ProfileError):
    """The memory budget is taken by work in progress; the request may be retried."""

    http_status = 503
    code = "OVERLOADED"


class Cancelled(ProfileError):
    """The work stopped because no request waited for it any more; asking again restarts it."""

    http_status = 503
    code = "CANCELLED"

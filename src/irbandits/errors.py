"""The exception types for user mistakes and refusals; the CLI prints the message and exits with code 2.

:class:`IrbanditsError` is a problem with what the user gave. Its subclasses are the refusals of the
service's runtimes, named for what happened, not for HTTP: :mod:`irbandits.service.guard` maps each to
its status code (one table, used by the app and the hot-route dispatcher).
"""


class IrbanditsError(ValueError):
    """A problem with the user's input: a bad file, option, name or parameter value."""


class NotFound(IrbanditsError):
    """What a request names does not exist, or is not the caller's to see."""


class Conflict(IrbanditsError):
    """The request clashes with the state: answered already, expired, decided, nothing to undo."""


class Unauthorized(IrbanditsError):
    """The caller's credential is missing, unknown or revoked."""


class Forbidden(IrbanditsError):
    """The caller is known, but this is not its to do (an assessor on an organiser's endpoint, or back)."""


class Unavailable(IrbanditsError):
    """The database cannot take the request now; trying again later may work."""

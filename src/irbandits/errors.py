"""The one exception type for user mistakes; the CLI prints its message and exits with code 2."""


class IrbanditsError(ValueError):
    """A problem with the user's input: a bad file, option, name or parameter value."""

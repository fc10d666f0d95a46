"""A2A-ERR-: refused operations and their error codes."""


def test_errors(streamcert):
    streamcert.check("errors")


def test_no_streaming(streamcert):
    """An agent whose card declares streaming: false refuses both streaming methods with -32004."""
    streamcert.check("no-streaming")


def test_extension_required(streamcert):
    """An agent whose card marks an extension required: true refuses a message that activates none with -32008."""
    streamcert.check("extension-required")

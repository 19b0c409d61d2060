"""Helpers for the behaviour scripts: each script asserts what current PyTorch really does."""
import warnings


def raises(fn, fragment):
    """``fn()`` raises an exception whose message contains ``fragment``."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the point is to see any error
        assert fragment in str(error), f"unexpected error: {error}"
        return
    raise AssertionError(f"expected an error containing {fragment!r}")


def warns(fn, fragment):
    """``fn()`` runs and warns with a message containing ``fragment``; returns its result."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    assert any(fragment in str(w.message) for w in caught), [str(w.message) for w in caught]
    return result

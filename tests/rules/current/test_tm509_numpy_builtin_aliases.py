"""TM509: numpy aliases of builtins."""
import numpy as np
import pytest

from current_support import execute, migrate


def test_numpy_aliases_run_on_numpy_2():
    source = "import numpy as np\na = np.zeros(2, dtype=np.float)\nb = np.array([1, 2]).astype(np.int)\n"
    with pytest.raises(AttributeError):
        execute(source)
    done = execute(migrate(source).text)
    assert done["a"].dtype == np.float64 and done["b"].dtype == np.int_

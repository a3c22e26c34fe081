"""The error of a training run stopped by values that overflowed."""

import numpy as np

from ._overflow import Quantity

QUANTITIES = {
    Quantity.SQUARED_RADIUS: "squared norm of an example (the radius of the data)",
    Quantity.THRESHOLD: "update threshold",
    Quantity.DECISION_VALUE: "decision value f(x)",
    Quantity.WEIGHTS: "weights",
    Quantity.AVERAGED_WEIGHTS: "averaged weights",
    Quantity.KERNEL_VALUE: "kernel values",
}

# The quantities computed from the data alone.
_DATA_QUANTITIES = (Quantity.SQUARED_RADIUS, Quantity.KERNEL_VALUE)

SCALE_INPUT = "Scale the input features (for example with StandardScaler)"


def new_failure():
    """The array a compiled loop fills when it stops on a value that is not
    finite: the quantity's code (0 while none), the epoch, the update count
    and the problem."""
    return np.zeros(4, dtype=np.int64)


def check_failure(failure, remedy):
    """Raise the ValueError of a compiled run stopped by ``failure``.

    ``remedy`` ends the message, after the advice to scale the input.
    """
    code, epoch, n_updates, problem = (int(v) for v in failure)
    if code:
        raise_non_finite(
            f"the {QUANTITIES[code]}",
            f"in epoch {epoch} (problem {problem}, {n_updates} updates "
            "counted): training stopped there",
            # The data's own values overflowed: only scaling them helps.
            "" if code in _DATA_QUANTITIES else remedy,
        )


def raise_non_finite(quantity, where, remedy):
    """Raise the ValueError of ``quantity`` (its name, with its article)
    overflowing ``where``; ``remedy`` follows the advice to scale the input."""
    raise ValueError(
        f"{quantity[0].upper()}{quantity[1:]} overflowed to non-finite values "
        f"{where}. {SCALE_INPUT}{' ' + remedy if remedy else ''}."
    )

"""The stratified validation split of early stopping, shared by the
estimators that offer ``early_stopping``."""

from sklearn.model_selection import train_test_split


def check_validation_split(codes, validation_fraction):
    """Raise if the stratified validation split of early stopping cannot be
    made: it needs every class on both sides."""
    try:
        train_test_split(
            codes, test_size=validation_fraction, stratify=codes, random_state=0
        )
    except ValueError as error:
        raise ValueError(
            "early_stopping=True sets aside a stratified "
            f"validation_fraction={validation_fraction} of the training data, "
            f"with every class on both sides, which this sample cannot give: {error}"
        ) from error

"""Analysis: pure functions from decoded XSpace frames to small result frames."""

# bad launch configurations name the problem
import numpy as np
import kiln


@kiln.jit
def k(a):
    a[0] = 1


def attempt(cfg):
    try:
        k[cfg](np.zeros(2))
        print("ok", cfg)
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


def main():
    for cfg in [(0, 1), (1, -5), (1, 2048), (1, (16, 16, 8)), (1.0, 32), ((1, 1, 1, 1), 1),
                (1,), (1, 1, 0, -1), (2**31, 1), (1, (1, 1, 65)), (2**63, 1), ((1, 2**70), 1),
                (-2**70, 1), (1, np.array([8]))]:
        attempt(cfg)
    try:
        k(np.zeros(2))
    except ValueError as e:
        print(f"ValueError: {e}")

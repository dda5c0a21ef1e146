"""CPU checks of attnc.reference's Philox-4x32-10 (no torch needed).

The GPU tests compare the fusion kernel's dropout mask bit for bit with this
reference, so the reference itself is pinned to the published known-answer
vectors of Random123 (Salmon et al., SC'11; kat_vectors, philox4x32 R=10).
"""

import unittest

from attnc import reference as r


class PhiloxKnownAnswers(unittest.TestCase):
    def test_zero_counter_zero_key(self):
        self.assertEqual(r.philox4x32_10(0, 0, 0, 0, 0, 0),
                         (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8))

    def test_all_ones(self):
        m = 0xFFFFFFFF
        self.assertEqual(r.philox4x32_10(m, m, m, m, m, m),
                         (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD))

    def test_pi_digits(self):
        self.assertEqual(
            r.philox4x32_10(0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344,
                            0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))


if __name__ == "__main__":
    unittest.main()

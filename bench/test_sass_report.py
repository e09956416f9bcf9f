#!/usr/bin/env python3
"""Unit tests of sass_report.py on a made-up nvdisasm -hex listing: the
control bits' fields, opcodes under predicates, a region between two
opcodes, and the region's stall cycles and scoreboard waits."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_report import control_bits, parse_nvdisasm, region, summary  # noqa: E402


def high_word(stall, wait_mask=0, write_barrier=7, read_barrier=7, yield_bit=1):
    """The high 64 bits of an instruction with these scheduling fields."""
    bits = (stall | yield_bit << 4 | write_barrier << 5 | read_barrier << 8 |
            wait_mask << 11)
    return bits << 41


def listing(rows):
    """nvdisasm -hex lines for [(address, text, high word)]."""
    lines = ["        .text.kernel:"]
    for address, text, high in rows:
        lines.append(f"        /*{address:04x}*/                   {text} ;"
                     f"          /* 0x0000000000000000 */")
        lines.append(f"                                                     /* 0x{high:016x} */")
    return "\n".join(lines) + "\n"


class ControlBitsTest(unittest.TestCase):
    def test_fields(self):
        # A real encoding: stall 2, yield, no barriers, no wait.
        self.assertEqual(control_bits(0x000fe4000fffe03f),
                         {"stall": 2, "yield": 1, "write_barrier": 7, "read_barrier": 7,
                          "wait_mask": 0})
        bits = control_bits(high_word(5, wait_mask=0b000011, write_barrier=1))
        self.assertEqual((bits["stall"], bits["wait_mask"], bits["write_barrier"]), (5, 3, 1))


class RegionTest(unittest.TestCase):
    ROWS = [(0x0, "S2R R0, SR_TID.X", high_word(1)),
            (0x10, "@!P0 MUFU.RCP R1, R2", high_word(2, write_barrier=0)),
            (0x20, "FFMA R3, R1, R4, R5", high_word(4, wait_mask=0b1)),
            (0x30, "MUFU.EX2 R6, R3", high_word(1, write_barrier=1)),
            (0x40, "STG.E.128 desc[UR4][R8.64], R12", high_word(1, wait_mask=0b10)),
            (0x50, "EXIT", high_word(5))]

    def test_parse(self):
        instructions = parse_nvdisasm(listing(self.ROWS))
        self.assertEqual([ins["opcode"] for ins in instructions],
                         ["S2R", "MUFU.RCP", "FFMA", "MUFU.EX2", "STG.E.128", "EXIT"])
        self.assertEqual(instructions[1]["text"], "@!P0 MUFU.RCP R1, R2")
        self.assertEqual(instructions[2]["address"], 0x20)

    def test_region_and_summary(self):
        instructions = parse_nvdisasm(listing(self.ROWS))
        part = summary(region(instructions, "MUFU", "STG"))
        self.assertEqual(part["instructions"], 4)
        self.assertEqual(part["stall_cycles"], 2 + 4 + 1 + 1)
        self.assertEqual(part["scoreboard_waits"], 2)
        self.assertEqual(part["opcodes"]["MUFU"], 2)
        self.assertEqual(summary(region(instructions))["instructions"], 6)

    def test_missing_opcode(self):
        instructions = parse_nvdisasm(listing(self.ROWS))
        with self.assertRaisesRegex(ValueError, "no HGMMA instruction"):
            region(instructions, "HGMMA")
        with self.assertRaisesRegex(ValueError, "no S2R instruction after"):
            region(instructions, "MUFU", "S2R")


if __name__ == "__main__":
    unittest.main()

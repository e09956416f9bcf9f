"""cudnn_conv_loop.py's convolution spec (no GPU)."""
import unittest

from cudnn_conv_loop import parse_spec


class ConvSpec(unittest.TestCase):
    def test_defaults_fill_stride_padding_and_groups(self):
        self.assertEqual(parse_spec("32,2048,7,7,512,1,1"),
                         {"n": 32, "c": 2048, "h": 7, "w": 7, "k": 512, "r": 1, "s": 1,
                          "stride": 1, "pad": 0, "groups": 1})
        self.assertEqual(parse_spec("32,96,56,56,96,3,3,2,1,96")["groups"], 96)

    def test_bad_specs_say_why(self):
        for text, why in [("32,2048,7", "want N,C,H,W,K,R,S"),
                          ("32,2048,7,7,512,1,1,0", "stride and groups"),
                          ("32,6,7,7,8,3,3,1,1,4", "divide the channels"),
                          ("32,0,7,7,8,3,3", "sizes must be positive"),
                          ("32,8,7,7,8,3,3,1,-1", "padding not negative"),
                          ("32,x,7,7,8,3,3", "invalid literal")]:
            with self.assertRaisesRegex(ValueError, why):
                parse_spec(text)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Table tests of the kernel sweep's classifier and its helpers, on compiler
messages shaped as GCC prints them for tt-metal kernels."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_sweep as ks  # noqa: E402

API = {"RISCV_DEBUG_REG_WALL_CLOCK_L", "NOC_X", "NUM_CIRCULAR_BUFFERS", "MEM_ZEROS_SIZE"}

EMU = "/work/x/cpp/emu/include/zyx_emu/dataflow.h"


class Classify(unittest.TestCase):
    def test_table(self):
        cases = [
            ("header", "In file included from kernel:12:\n"
             "/t/ttnn/cpp/ttnn/kernel_lib/cb_helpers.hpp:7:10: fatal error: tt-metalium/circular_buffer_constants.h: "
             "No such file or directory\ncompilation terminated.\n",
             ("missing-header", "tt-metalium/circular_buffer_constants.h")),
            ("not a member", "reduce.cpp:20:27: error: 'PoolType' is not a member of 'ckernel'\n",
             ("missing-name", "ckernel::PoolType")),
            ("not declared in scope", "/t/ttnn/cpp/ttnn/kernel_lib/reduce_helpers_dataflow.hpp:13:16: error: "
             "'PoolType' has not been declared in 'ckernel'\n", ("missing-name", "ckernel::PoolType")),
            ("api macro", "k.cpp:9:31: error: 'RISCV_DEBUG_REG_WALL_CLOCK_L' was not declared in this scope\n",
             ("missing-name", "RISCV_DEBUG_REG_WALL_CLOCK_L")),
            ("factory define", "k.cpp:40:5: error: 'SFPU_OP_CHAIN_0' was not declared in this scope\n",
             ("needs-define", "SFPU_OP_CHAIN_0")),
            ("define unknown without index", "k.cpp:40:5: error: 'SFPU_OP_CHAIN_0' was not declared in this scope\n",
             ("missing-name", "SFPU_OP_CHAIN_0"), None),
            ("lower-case name", "k.cpp:3:5: error: 'riscv_wait' was not declared in this scope; did you mean "
             "'riscv_wait_x'?\n", ("missing-name", "riscv_wait")),
            ("namespace type", "k.cpp:3:5: error: 'use' in namespace 'experimental' does not name a type\n",
             ("missing-name", "experimental::use")),
            ("not a template", "k.cpp:8:20: error: 'get_read_ptr' is not a template\n",
             ("missing-name", "get_read_ptr")),
            ("no member named", "k.cpp:8:20: error: 'struct CircularBuffer' has no member named 'get_tile_hw'\n",
             ("missing-name", "struct CircularBuffer::get_tile_hw")),
            ("old form", "k.cpp:30:21: error: no matching function for call to 'reduce_init<true>(uint32_t&, "
             "uint32_t&, uint32_t&)'\n", ("missing-name", "reduce_init (no matching form)")),
            ("emulator defect", "In file included from kernel:1:\n" + EMU + ":812:3: error: invalid conversion "
             "from 'volatile uint32_t*' to 'const void*' [-fpermissive]\n",
             ("emulator-defect", "invalid conversion from 'volatile uint32_t*' to 'const void*' [-fpermissive]")),
            ("kernel #error", "k.cpp:2:2: error: #error \"REDUCE_DIM is not defined\"\n",
             ("needs-define", "#error \"REDUCE_DIM is not defined\"")),
            ("first error wins", "k.cpp:5:1: error: 'NOC_X' was not declared in this scope\n"
             "k.cpp:9:1: fatal error: foo.h: No such file or directory\n", ("missing-name", "NOC_X")),
            ("other, numbers folded", "k.cpp:5:1: error: static assertion failed: need 32 tiles\n",
             ("other", "static assertion failed: need N tiles")),
            ("no error line", "warning: unused\n", ("other", "no compiler error line")),
            ("utf-8 quotes", "k.cpp:53:42: error: \u2018ELTWISE_OP_TYPE\u2019 was not declared in this scope\n",
             ("needs-define", "ELTWISE_OP_TYPE")),
        ]
        for case in cases:
            name, diag, want = case[:3]
            api = case[3] if len(case) > 3 else API
            with self.subTest(name):
                self.assertEqual(ks.classify(diag, api), want)


class Helpers(unittest.TestCase):
    def test_multi_chip(self):
        cases = [
            ("ttnn/cpp/ttnn/operations/ccl/all_gather/device/kernels/reader.cpp", "", True),
            ("ttnn/cpp/ttnn/operations/experimental/ccl/x/kernels/w.cpp", "", True),
            ("tests/tt_metal/tt_metal/test_kernels/dataflow/erisc/send.cpp", "", True),
            ("ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/add.cpp", "", False),
            ("tt_metal/kernels/dataflow/reader.cpp", '#include "tt_metal/fabric/hw/inc/edm.hpp"\n', True),
            ("ttnn/cpp/ttnn/operations/reduction/generic/device/kernels/dataflow/r.cpp",
             '#include "api/dataflow/dataflow_api.h"\n', False),
        ]
        for rel, src, want in cases:
            with self.subTest(rel):
                self.assertEqual(ks.is_multi_chip(rel, src), want)
        # A kernel that reaches fabric through a header it includes.
        rel = "ttnn/cpp/ttnn/operations/data_movement/moe/device/kernels/dataflow/w.cpp"
        cases = [
            ("/t/tt_metal/fabric/hw/inc/tt_fabric_api.h:10:10: fatal error: noc_overlay_parameters.h: "
             "No such file or directory\n", True),
            ("w.cpp:3:10: fatal error: internal/ethernet/dataflow_api.h: No such file or directory\n", True),
            ("w.cpp:9:5: error: 'noc_async_read' was not declared in this scope\n", False),
            ("w.cpp:3:10: fatal error: api/compute/gcd.h: No such file or directory\n", False),
        ]
        for diag, want in cases:
            with self.subTest(diag):
                self.assertEqual(ks.is_multi_chip(rel, "", diag), want)

    def test_processor(self):
        cases = [
            ("a/kernels/compute/x.cpp", "void kernel_main() {}", "--compute"),
            ("a/kernels/x.cpp", "namespace NAMESPACE { void MAIN {} }", "--compute"),
            ("a/kernels/x.cpp", '#include "api/compute/eltwise_binary.h"\nvoid kernel_main(){}', "--compute"),
            ("a/kernels/dataflow/reader_unary.cpp", "void kernel_main() {}", "--ncrisc"),
            ("a/kernels/dataflow/writer_unary.cpp", "void kernel_main() {}", "--brisc"),
        ]
        for rel, src, want in cases:
            with self.subTest(rel):
                self.assertEqual(ks.processor_flag(rel, src), want)

    def test_named_args(self):
        literal = 'constexpr uint32_t a = get_named_compile_time_arg_val("num_tiles"); DPRINT << "END";'
        self.assertEqual(ks.named_args(literal), ["num_tiles"])
        indirect = ('constexpr const char* names[] = {"cb_a", "cb_b", "not a name"};\n'
                    'arr[i] = get_named_compile_time_arg_val(names[i]); x = get_named_compile_time_arg_val("k");')
        self.assertEqual(ks.named_args(indirect), ["cb_a", "cb_b", "k"])
        self.assertEqual(ks.named_args("void kernel_main() {}"), [])
        # Any string names a named arg, as on tt-metal; escapes are undone.
        odd = ('a = get_named_compile_time_arg_val("!@#$%^&*()"); b = get_named_compile_time_arg_val("");\n'
               'c = get_named_compile_time_arg_val(\n    "long_name"); d = get_named_compile_time_arg_val("q\\"x");')
        self.assertEqual(ks.named_args(odd), ["", "!@#$%^&*()", "long_name", 'q"x'])

    def test_metal2_names(self):
        src = ('uint32_t a = get_arg(args::dst_addr); // args::dst_addr again\n'
               'experimental::DataflowBuffer b(dfb::out_buf), c(dfb::in_buf);\n'
               'x = ttnn::args::not_ours; y = my_args::neither; constexpr auto n = get_arg(args::n);')
        self.assertEqual(ks.metal2_names(src), (["dst_addr", "n"], ["in_buf", "out_buf"]))
        self.assertEqual(ks.metal2_names("void kernel_main() {}"), ([], []))

    def test_group(self):
        cases = [
            ("ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/a.cpp",
             "ttnn/cpp/ttnn/operations/eltwise"),
            ("tests/tt_metal/tt_metal/test_kernels/dataflow/unit_tests/a.cpp",
             "tests/tt_metal/tt_metal/test_kernels/dataflow"),
            ("tt_metal/programming_examples/add/kernels/a.cpp", "tt_metal/programming_examples"),
            ("tt_metal/kernels/dataflow/a.cpp", "tt_metal/kernels"),
        ]
        for rel, want in cases:
            with self.subTest(rel):
                self.assertEqual(ks.group_of(rel), want)

    def test_defines_table(self):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            f.write("# comment\n*/reduction/*\tREDUCE_OP=PoolType::SUM REDUCE_DIM=ReduceDim::REDUCE_ROW\n"
                    "*/eltwise/*\tELTWISE_OP=add_tiles  # trailing comment\n")
        try:
            table = ks.load_defines(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(ks.defines_for("ttnn/x/reduction/k.cpp", table),
                         ["REDUCE_OP=PoolType::SUM", "REDUCE_DIM=ReduceDim::REDUCE_ROW"])
        self.assertEqual(ks.defines_for("ttnn/x/eltwise/k.cpp", table), ["ELTWISE_OP=add_tiles"])
        self.assertEqual(ks.defines_for("ttnn/x/matmul/k.cpp", table), [])

    def test_defines_table_errors(self):
        for text in ("*/x/*  NO_TAB=1\n", "*/x/*\tNOEQUALS\n", "*/x/*\t=1\n"):
            with self.subTest(text), tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
                f.write(text)
            try:
                with self.assertRaises(ValueError):
                    ks.load_defines(f.name)
            finally:
                os.unlink(f.name)

    def write_temp(self, suffix, text):
        with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_args_table(self):
        table = ks.load_args(self.write_temp(".tsv", "*/tilize/*\t1=16  # the output CB\n*/tilize/k.cpp\t3=2\n"))
        self.assertEqual(ks.defines_for("ttnn/tilize/k.cpp", table), ["1=16", "3=2"])
        self.assertEqual(ks.defines_for("ttnn/untilize/k.cpp", table), [])
        for text in ("*/x/*\tA=1\n", "*/x/*\t1=B\n", "*/x/*\t1\n"):
            with self.subTest(text), self.assertRaises(ValueError):
                ks.load_args(self.write_temp(".tsv", text))

    def test_listed_kernels(self):
        listed = self.write_temp(".txt", "# the failures\na/k1.cpp\n\nb/k2.cpp\n")
        self.assertEqual(ks.listed_kernels(listed), {"a/k1.cpp", "b/k2.cpp"})
        earlier = self.write_temp(".json", '[{"rel": "a/k1.cpp", "ok": true}, {"rel": "b/k2.cpp", "ok": false}]')
        self.assertEqual(ks.listed_kernels(earlier), {"b/k2.cpp"})



DP = "tests/tt_metal/tt_metal/test_kernels/device_print/failures/"
FIELD_COUNT = ("k.cpp:5:5: error: call to non-'constexpr' function 'void zyx_emu_detail::format_error_field_count()'\n"
               "In file included from kernel:1:\n" + EMU + ":200:3: note: declared here\n")
MIXED = "k.cpp:5:5: error: call to non-'constexpr' function 'void zyx_emu_detail::format_error_mixed_fields()'\n"


class Judge(unittest.TestCase):
    def test_expected_rejections(self):
        # Rejected by the rule tt-metal's test expects: the kernel builds correctly.
        r = ks.judge(DP + "too_many_arguments.cpp", False, FIELD_COUNT)
        self.assertTrue(r["ok"])
        self.assertEqual(r["expected_rejection"], "Number of {} placeholders must match number of arguments")
        # Rejected by another rule: a failure, classified as any.
        r = ks.judge(DP + "too_many_arguments.cpp", False, MIXED)
        self.assertFalse(r["ok"])
        self.assertNotIn("expected_rejection", r)
        self.assertEqual(r["category"], "other")
        # Built: a failure, saying what tt-metal's test expects.
        r = ks.judge(DP + "mixed_placeholders.cpp", True, "")
        self.assertFalse(r["ok"])
        self.assertEqual(r["category"], "other")
        self.assertIn("expects it rejected: Cannot mix indexed", r["blocker"])
        # Every tt-metal device_print failure test is listed, with its own rule.
        self.assertEqual(len([k for k in ks.EXPECTED_REJECTIONS if k.startswith(DP)]), 6)
        # Any other kernel that fails the same way fails.
        r = ks.judge("tests/tt_metal/tt_metal/test_kernels/misc/print.cpp", False, FIELD_COUNT)
        self.assertFalse(r["ok"])

    def test_not_on_tt_metal(self):
        rel = "tests/tt_metal/tt_metal/test_kernels/dataflow/reader_matmul_tile_layout_in0_sender_in1_sender.cpp"
        diag = ("k.cpp:131:60: error: 'AddrSel' is not a member of 'experimental::CircularBuffer'\n")
        r = ks.judge(rel, False, diag)
        self.assertFalse(r["ok"])
        self.assertEqual((r["category"], r["blocker"]), ("missing-name", "experimental::CircularBuffer::AddrSel"))
        self.assertIn("AddrSelector", r["excluded"])
        # Built after all: counted, not excluded.
        self.assertNotIn("excluded", ks.judge(rel, True, ""))
        # Another kernel with the same error is counted.
        self.assertNotIn("excluded", ks.judge("tests/x/kernels/k.cpp", False, diag))

    def test_report_counts(self):
        results = [
            {"rel": "a/kernels/ok.cpp", "group": "a", "multi": False, "ok": True},
            {"rel": DP + "mixed_placeholders.cpp", "group": "a", "multi": False, "ok": True,
             "expected_rejection": "Cannot mix"},
            {"rel": "a/kernels/define.cpp", "group": "a", "multi": False, "ok": False, "category": "needs-define",
             "blocker": "FOO"},
            {"rel": "a/kernels/stale.cpp", "group": "a", "multi": False, "ok": False, "category": "missing-name",
             "blocker": "x", "excluded": "evidence"},
            {"rel": "a/kernels/fail.cpp", "group": "a", "multi": False, "ok": False, "category": "missing-name",
             "blocker": "y"},
        ]
        import io
        out = io.StringIO()
        ks.report(results, 10, out)
        text = out.getvalue()
        self.assertIn("without the 1 that need a program-factory define and the 1 that do not build on tt-metal "
                      "either: 2 of 3 (66.7 %)", text)
        self.assertIn("1 of them rejected as tt-metal's tests expect", text)
        # The excluded kernel's error is not a blocker.
        self.assertNotIn(" x\n", text)


if __name__ == "__main__":
    unittest.main()

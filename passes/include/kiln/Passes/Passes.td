//===- Passes.td - kiln's graph passes -------------------*- tablegen -*-===//
//
// Every kiln pass, grouped by phase under banners, alphabetical within a
// group. Arguments carry the `kiln-` prefix.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def KilnFuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "groups chains of elementwise ops into kiln.fusion regions";
  let description = [{
    Elementwise ops that compute over the same index space (equal result
    shapes) and feed one another become one `kiln.fusion elementwise` group,
    which codegen turns into one kernel. Operands of other shapes enter the
    group as broadcast inputs. A producer whose result is also used outside
    the group joins it and becomes an extra result of the group, so nothing
    is computed twice. Scalar and splat constants are cloned into the body.
    A merge that would make a cycle through an op outside the group (A -> X
    -> B with A and B grouped, X not) is refused.

    Before:
    ```mlir
    %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = kiln.relu %0 : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %1 = kiln.fusion elementwise ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
      %2 = kiln.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %3 = kiln.relu %2 : tensor<4x8xf32>
      kiln.yield %3 : tensor<4x8xf32>
    }
    ```

    An op carrying the unit attribute `kiln.no_fuse` is kept out of every
    group: tests use it to exercise the mechanics apart from the policy.
  }];
  let options = [
    Option<"fuseMultiUse", "fuse-multi-use", "bool", /*default=*/"true",
           "let a producer with uses outside the group join it as an extra "
           "result (off: such producers end a group)">,
    Option<"wrapSingleOps", "wrap-single-ops", "bool", /*default=*/"true",
           "wrap an elementwise op that fuses with nothing in a group of its "
           "own, so that every kernel is a fusion group">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_PASSES_PASSES_TD

//! OCF formulas: values (with six-place decimals), the static type checker and the evaluator.

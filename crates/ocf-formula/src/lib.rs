//! OCF formulas: values (with six-place decimals), the static type checker and the evaluator.
//!
//! A formula is parsed and lowered once ([`Formula::parse`]) and evaluated as often as needed
//! against a [`Context`] ([`Formula::evaluate`]). The language is described in
//! `docs/spec/formulas.md`; the judgement calls are in `docs/spec/decisions.md`.
//!
//! ```
//! use ocf_formula::{Formula, MapContext, Value};
//! let ctx = MapContext::from_json(&serde_json::json!({ "fields": { "level.total": 7 } })).unwrap();
//! let formula = Formula::parse("max(1, floor(level.total / 2))").unwrap();
//! assert_eq!(formula.evaluate(&ctx), Ok(Value::Int(3)));
//! ```

pub mod arith;
pub mod bounded;
pub mod check;
pub mod context;
pub mod decimal;
pub mod dice_fns;
pub mod error;
pub mod eval;
pub mod json_text;
pub mod limits;
pub mod lower;
pub mod lowered;
pub mod map;
pub mod partial;
pub mod ty;
pub mod value;

pub use crate::check::{Env, check};
pub use crate::context::{Context, MapContext};
pub use crate::decimal::Decimal;
pub use crate::error::{ContextError, ErrorCode, FormulaError, TextRange};
pub use crate::limits::Limits;
pub use crate::lowered::{ExprId, Function, Lowered, Root};
pub use crate::ty::Ty;
pub use crate::value::Value;

use ocf_dice::value::DiceValue;

/// A parsed and lowered formula, ready to check and to evaluate any number of times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formula {
    lowered: Lowered,
    limits: Limits,
}

impl Formula {
    /// Parses and lowers `text` with the default [`Limits`].
    pub fn parse(text: &str) -> Result<Formula, Vec<FormulaError>> {
        Formula::parse_with_limits(text, Limits::default())
    }

    /// Parses and lowers `text`. Syntax errors (`formula-syntax`, `safety-limit-exceeded`) come
    /// first and stop lowering; then every lowering error (`unknown-name` for an unknown
    /// function, ...).
    pub fn parse_with_limits(text: &str, limits: Limits) -> Result<Formula, Vec<FormulaError>> {
        let parse = ocf_syntax::parse_with_limits(text, &limits.syntax);
        if !parse.errors.is_empty() {
            return Err(parse
                .errors
                .into_iter()
                .map(|e| {
                    let code = match e.code {
                        ocf_syntax::ErrorCode::FormulaSyntax => ErrorCode::FormulaSyntax,
                        ocf_syntax::ErrorCode::SafetyLimitExceeded => {
                            ErrorCode::SafetyLimitExceeded
                        }
                    };
                    FormulaError::new(code, e.message, e.range)
                })
                .collect());
        }
        let lowered = lower::lower(&parse.root(), &limits)?;
        Ok(Formula { lowered, limits })
    }

    /// One expression of a formula parsed without errors, lowered as a formula of its own (what
    /// parsing its printed text gives, without parsing it again).
    pub fn of_expr(expr: &ocf_syntax::ast::Expr) -> Result<Formula, Vec<FormulaError>> {
        let limits = Limits::default();
        let lowered = lower::lower_expr(expr, &limits)?;
        Ok(Formula { lowered, limits })
    }

    pub fn lowered(&self) -> &Lowered {
        &self.lowered
    }

    /// The formula's value in `ctx`.
    pub fn evaluate(&self, ctx: &dyn Context) -> Result<Value, FormulaError> {
        eval::evaluate(&self.lowered, ctx, &self.limits)
    }

    /// The formula's static type in `env`, or every `unknown-name` and `type-mismatch` found.
    pub fn check(&self, env: &Env) -> Result<Ty, Vec<FormulaError>> {
        check::check(&self.lowered, env)
    }
}

/// Reads a dice value written in dice notation (`2d6 + 1`, `-1d4`, `0`): a formula of dice
/// literals, ints, `+` and `-`, evaluated with nothing bound.
pub fn dice_from_notation(text: &str) -> Result<DiceValue, String> {
    let first_error = |errors: Vec<FormulaError>| {
        errors
            .into_iter()
            .next()
            .map_or_else(String::new, |e| e.to_string())
    };
    let formula = Formula::parse(text).map_err(first_error)?;
    match formula
        .evaluate(&MapContext::new())
        .map_err(|e| e.to_string())?
    {
        Value::Dice(d) => Ok((*d).clone()),
        Value::Int(n) => Ok(DiceValue::flat(n)),
        other => Err(format!("a {} is not dice", other.type_name())),
    }
}

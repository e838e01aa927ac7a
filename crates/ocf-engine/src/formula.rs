//! Formulas as the sheet reads them: parsed and lowered once per distinct text, whatever declares
//! them. Names are resolved when the formula is evaluated, in the declaring pack (see
//! [`crate::context`]), so one parse serves every pack.

use std::sync::Arc;

use ocf_formula::{Formula, FormulaError};

/// A formula's text, interned: the key of [`parsed`].
#[salsa::interned(debug)]
pub struct FormulaText<'db> {
    #[returns(ref)]
    pub text: String,
}

/// The parsed and lowered formula, or its syntax and lowering errors.
#[salsa::tracked(returns(ref))]
pub fn parsed<'db>(
    db: &'db dyn salsa::Database,
    text: FormulaText<'db>,
) -> Result<Arc<Formula>, Vec<FormulaError>> {
    Formula::parse(text.text(db)).map(Arc::new)
}

/// Parses `text` through the query.
pub fn parse(db: &dyn salsa::Database, text: &str) -> Result<Arc<Formula>, FormulaError> {
    match parsed(db, FormulaText::new(db, text)) {
        Ok(formula) => Ok(formula.clone()),
        Err(errors) => Err(errors.first().cloned().unwrap_or_else(|| {
            FormulaError::new(
                ocf_formula::ErrorCode::FormulaSyntax,
                "the formula does not parse",
                Default::default(),
            )
        })),
    }
}

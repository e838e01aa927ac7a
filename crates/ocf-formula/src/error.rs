//! Formula errors: a code from the spec's list, a message for people, and the range of the formula
//! text it is about.

use std::fmt;

pub use rowan::{TextRange, TextSize};

/// The spec's error codes a formula can fail with (catalogue §1.9, §6), plus the two the chapters do
/// not name but an evaluator needs (`division-by-zero`, `arithmetic-overflow`; see decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    FormulaSyntax,
    UnknownName,
    TypeMismatch,
    NoSuchKey,
    CircularFormula,
    SafetyLimitExceeded,
    DivisionByZero,
    ArithmeticOverflow,
}

impl ErrorCode {
    /// The code as the spec writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::FormulaSyntax => "formula-syntax",
            ErrorCode::UnknownName => "unknown-name",
            ErrorCode::TypeMismatch => "type-mismatch",
            ErrorCode::NoSuchKey => "no-such-key",
            ErrorCode::CircularFormula => "circular-formula",
            ErrorCode::SafetyLimitExceeded => "safety-limit-exceeded",
            ErrorCode::DivisionByZero => "division-by-zero",
            ErrorCode::ArithmeticOverflow => "arithmetic-overflow",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a formula could not be lowered, checked or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FormulaError {
    pub code: ErrorCode,
    pub message: String,
    /// The part of the formula text the error is about.
    pub range: TextRange,
}

impl FormulaError {
    pub fn new(code: ErrorCode, message: impl Into<String>, range: TextRange) -> FormulaError {
        FormulaError {
            code,
            message: message.into(),
            range,
        }
    }
}

impl fmt::Display for FormulaError {
    /// `type-mismatch at 4..9: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, end) = (u32::from(self.range.start()), u32::from(self.range.end()));
        write!(f, "{} at {start}..{end}: {}", self.code, self.message)
    }
}

impl std::error::Error for FormulaError {}

/// An error a [`crate::Context`] reports without knowing where in the formula it was asked; the
/// evaluator gives it the range of the expression that asked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContextError {
    pub code: ErrorCode,
    pub message: String,
}

impl ContextError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ContextError {
        ContextError {
            code,
            message: message.into(),
        }
    }

    pub fn unknown(message: impl Into<String>) -> ContextError {
        ContextError::new(ErrorCode::UnknownName, message)
    }

    pub fn at(self, range: TextRange) -> FormulaError {
        FormulaError {
            code: self.code,
            message: self.message,
            range,
        }
    }
}

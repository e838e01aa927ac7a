//! Syntax errors and the spec's error codes for them.

use std::fmt;

use rowan::TextRange;

/// The spec's error codes a formula's syntax can give (catalogue §1.9, §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `formula-syntax`: the formula does not parse.
    FormulaSyntax,
    /// `safety-limit-exceeded`: the formula is longer or deeper than the limits allow.
    SafetyLimitExceeded,
}

impl ErrorCode {
    /// The code as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::FormulaSyntax => "formula-syntax",
            ErrorCode::SafetyLimitExceeded => "safety-limit-exceeded",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in a formula's text, at a byte range of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub code: ErrorCode,
    pub message: String,
    pub range: TextRange,
}

impl SyntaxError {
    pub(crate) fn syntax(message: impl Into<String>, range: TextRange) -> SyntaxError {
        SyntaxError {
            code: ErrorCode::FormulaSyntax,
            message: message.into(),
            range,
        }
    }

    pub(crate) fn limit(message: impl Into<String>, range: TextRange) -> SyntaxError {
        SyntaxError {
            code: ErrorCode::SafetyLimitExceeded,
            message: message.into(),
            range,
        }
    }
}

impl fmt::Display for SyntaxError {
    /// `error 3..4: formula-syntax: expected an expression after `&&``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error {}..{}: {}: {}",
            u32::from(self.range.start()),
            u32::from(self.range.end()),
            self.code,
            self.message
        )
    }
}

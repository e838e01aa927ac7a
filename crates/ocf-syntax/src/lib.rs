//! The syntax of OCF formulas: a lexer, a parser that never fails and keeps every byte of its input
//! in a rowan tree, a typed AST over that tree, and the standard printer.

pub mod dice;

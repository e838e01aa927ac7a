//! The parser: a hand-written Pratt parser that builds the rowan tree directly, with checkpoints.
//!
//! It never fails: whatever the text, it returns a tree holding every byte, plus errors. Whitespace
//! is attached before a node starts, so a node's range begins at its first real token.
//!
//! Depth is bounded as the tree is built. Each parse function gets a `budget`: how many levels of
//! expression nodes the subtree it builds may have. A child is parsed with `budget - 1`, and a loop
//! that wraps what it has built in a new node (`a + b + c`, `a.b.c`) checks the wrapped height
//! against the budget first. So no expression node ends up deeper than `max_formula_depth`, and the
//! parser's own recursion is bounded by it too. Past the limit, the parser reports one
//! `safety-limit-exceeded` error and puts the rest of the text in an `ERROR` node.

use rowan::{Checkpoint, GreenNode, GreenNodeBuilder, TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::lexer::{self, Token};
use crate::{Limits, SyntaxError, dice};

/// Binding power of the ternary `?:`, the loosest operator; its `else` branch is parsed at this
/// power, so `a ? b : c ? d : e` nests to the right.
const TERNARY_BP: u8 = 1;
/// Binding power of a prefix operator's operand: tighter than every binary operator, looser than
/// postfix ones, so `-a.b * c` is `(-(a.b)) * c` and `!x in y` is `(!x) in y`.
const PREFIX_BP: u8 = 15;

/// Left and right binding powers of a binary operator; right = left + 1 makes it left-associative.
fn infix_binding_power(kind: SyntaxKind) -> Option<(u8, u8)> {
    let left = match kind {
        PIPE2 => 3,
        AMP2 => 5,
        EQ2 | NEQ => 7,
        LT | LTEQ | GT | GTEQ | IN_KW => 9,
        PLUS | MINUS => 11,
        STAR | SLASH | PERCENT => 13,
        _ => return None,
    };
    Some((left, left + 1))
}

/// Whether a token can begin an expression.
fn starts_expr(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        INT | DECIMAL
            | STRING
            | DICE
            | IDENT
            | TRUE_KW
            | FALSE_KW
            | NULL_KW
            | L_PAREN
            | L_BRACK
            | MINUS
            | BANG
            | ERROR
    )
}

pub(crate) fn parse(text: &str, limits: &Limits) -> (GreenNode, Vec<SyntaxError>) {
    let max_length = limits.max_formula_length.min(u32::MAX as usize);
    if text.len() > max_length {
        return too_long(text, max_length);
    }
    let (tokens, lex_errors) = lexer::lex(text);
    let mut p = Parser {
        text,
        tokens,
        lex_errors,
        next_lex_error: 0,
        pos: 0,
        builder: GreenNodeBuilder::new(),
        errors: Vec::new(),
        max_depth: limits.max_formula_depth,
        abandoned: false,
    };
    p.formula();
    (p.builder.finish(), p.errors)
}

/// The tree of a text over the length limit: its bytes in one `ERROR` token, nothing read.
fn too_long(text: &str, max_length: usize) -> (GreenNode, Vec<SyntaxError>) {
    let mut builder = GreenNodeBuilder::new();
    builder.start_node(FORMULA.into());
    builder.start_node(ERROR.into());
    builder.token(ERROR.into(), text);
    builder.finish_node();
    builder.finish_node();
    // Past `u32::MAX` bytes a range cannot say where the text ends; such a text is never read.
    let end = TextSize::new(u32::try_from(text.len()).unwrap_or(u32::MAX));
    let error = SyntaxError::limit(
        format!(
            "the formula is {} bytes long, more than the limit of {max_length} (maxFormulaLength)",
            text.len()
        ),
        TextRange::new(0.into(), end),
    );
    (builder.finish(), vec![error])
}

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    /// Lexical errors with the index of their token, in token order; reported as tokens are added.
    lex_errors: Vec<(usize, SyntaxError)>,
    next_lex_error: usize,
    /// The next token to add to the tree (possibly whitespace).
    pos: usize,
    builder: GreenNodeBuilder<'static>,
    errors: Vec<SyntaxError>,
    max_depth: usize,
    /// Set once the depth limit is reached: the rest of the text is in an `ERROR` node and no
    /// further error is reported, so a too-deep formula gives exactly one error.
    abandoned: bool,
}

/// The start of an expression being built, to wrap it later in a node (`a` of `a + b`).
#[derive(Clone, Copy)]
struct Start {
    checkpoint: Checkpoint,
    offset: TextSize,
}

impl Parser<'_> {
    // Token access -------------------------------------------------------------------------------

    /// The index of the next non-whitespace token.
    fn current_index(&self) -> Option<usize> {
        (self.pos..self.tokens.len()).find(|&i| !self.tokens[i].kind.is_trivia())
    }

    fn current(&self) -> Option<SyntaxKind> {
        self.current_index().map(|i| self.tokens[i].kind)
    }

    fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == Some(kind)
    }

    /// The range of the next token, or an empty range at the end of the text.
    fn current_range(&self) -> TextRange {
        match self.current_index() {
            Some(i) => self.tokens[i].range,
            None => TextRange::empty(TextSize::new(self.text.len() as u32)),
        }
    }

    /// The end of the last token added to the tree, whitespace included.
    fn last_end(&self) -> TextSize {
        match self.pos {
            0 => 0.into(),
            n => self.tokens[n - 1].range.end(),
        }
    }

    /// The next token, for messages: "`)`", "`abc`", "the end of the formula".
    fn found(&self) -> String {
        match self.current_index() {
            None => "the end of the formula".to_string(),
            Some(i) => {
                let text = &self.text[self.tokens[i].range];
                match text.char_indices().nth(24) {
                    Some((cut, _)) => format!("`{}...`", &text[..cut]),
                    None => format!("`{text}`"),
                }
            }
        }
    }

    // Building -----------------------------------------------------------------------------------

    fn add_token(&mut self) {
        let token = self.tokens[self.pos];
        self.builder
            .token(token.kind.into(), &self.text[token.range]);
        while let Some((index, error)) = self.lex_errors.get(self.next_lex_error) {
            if *index > self.pos {
                break;
            }
            if !self.abandoned {
                self.errors.push(error.clone());
            }
            self.next_lex_error += 1;
        }
        self.pos += 1;
    }

    fn flush_trivia(&mut self) {
        while self.pos < self.tokens.len() && self.tokens[self.pos].kind.is_trivia() {
            self.add_token();
        }
    }

    /// Adds the whitespace before the next token, then the token.
    fn bump(&mut self) {
        self.flush_trivia();
        if self.pos < self.tokens.len() {
            self.add_token();
        }
    }

    fn start_node(&mut self, kind: SyntaxKind) {
        self.flush_trivia();
        self.builder.start_node(kind.into());
    }

    fn finish_node(&mut self) {
        self.builder.finish_node();
    }

    fn start(&mut self) -> Start {
        self.flush_trivia();
        Start {
            checkpoint: self.builder.checkpoint(),
            offset: self.current_range().start(),
        }
    }

    fn wrap(&mut self, start: Start, kind: SyntaxKind) {
        self.builder.start_node_at(start.checkpoint, kind.into());
    }

    fn error(&mut self, message: impl Into<String>, range: TextRange) {
        if !self.abandoned {
            self.errors.push(SyntaxError::syntax(message, range));
        }
    }

    fn error_here(&mut self, message: impl Into<String>) {
        let range = self.current_range();
        self.error(message, range);
    }

    /// Bumps `kind` if it is next, or reports that it is missing.
    fn expect(&mut self, kind: SyntaxKind, why: &str) {
        if self.at(kind) {
            self.bump();
        } else {
            let text = kind.fixed_text().unwrap_or("?");
            let message = format!("expected `{text}` {why}, found {}", self.found());
            self.error_here(message);
        }
    }

    /// Reports the depth limit once and puts the rest of the text in an `ERROR` node.
    fn depth_exceeded(&mut self) {
        if !self.abandoned {
            let message = format!(
                "the formula nests deeper than the limit of {} (maxFormulaDepth)",
                self.max_depth
            );
            self.errors
                .push(SyntaxError::limit(message, self.current_range()));
            self.abandoned = true;
        }
        self.rest_as_error();
    }

    fn rest_as_error(&mut self) {
        if self.current().is_some() {
            self.start_node(ERROR);
            while self.pos < self.tokens.len() {
                self.add_token();
            }
            self.finish_node();
        }
    }

    // Grammar ------------------------------------------------------------------------------------

    fn formula(&mut self) {
        self.builder.start_node(FORMULA.into());
        let mut parsed = false;
        if self.current().is_none() {
            self.error_here("the formula is empty: expected an expression");
        } else {
            parsed = self.operand(0, self.max_depth, "") > 0;
        }
        if let Some(kind) = self.current() {
            // A stray token after a whole expression. An `ERROR` token was reported by the lexer,
            // and a token where the expression should start was reported by `operand`.
            if kind != ERROR && parsed {
                let message = match kind {
                    R_PAREN | R_BRACK => format!("unmatched {}", self.found()),
                    _ => format!(
                        "expected an operator or the end of the formula, found {}",
                        self.found()
                    ),
                };
                self.error_here(message);
            }
            self.rest_as_error();
        }
        self.flush_trivia();
        self.finish_node();
    }

    /// An expression that must be there; `context` ends the message when it is not ("after `&&`").
    /// Returns the height of the tree built, 0 if none.
    fn operand(&mut self, min_bp: u8, budget: usize, context: &str) -> usize {
        match self.expr_bp(min_bp, budget) {
            Some(height) => height,
            None => {
                if !self.abandoned {
                    let sep = if context.is_empty() { "" } else { " " };
                    let message = format!(
                        "expected an expression{sep}{context}, found {}",
                        self.found()
                    );
                    self.error_here(message);
                }
                0
            }
        }
    }

    /// An expression whose binary operators bind at least `min_bp`, at most `budget` nodes high.
    /// Returns its height, or `None` if the next token starts no expression (nothing is consumed).
    fn expr_bp(&mut self, min_bp: u8, budget: usize) -> Option<usize> {
        let kind = self.current()?;
        if !starts_expr(kind) {
            return None;
        }
        if budget == 0 {
            self.depth_exceeded();
            return None;
        }
        let start = self.start();
        let mut height = self.prefix_or_primary(kind, budget);
        let mut is_name = kind == IDENT;
        while let Some(kind) = self.current() {
            let binding = infix_binding_power(kind);
            let continues = match kind {
                DOT | L_BRACK | L_PAREN => true,
                QUESTION => min_bp <= TERNARY_BP,
                _ => binding.is_some_and(|(left, _)| left >= min_bp),
            };
            if !continues {
                break;
            }
            if height + 1 > budget {
                self.depth_exceeded();
                break;
            }
            let child_budget = budget - 1;
            let child_height = match kind {
                DOT => self.field(start),
                L_BRACK => self.index(start, child_budget),
                L_PAREN => self.call(start, is_name, child_budget),
                QUESTION => self.ternary(start, child_budget),
                _ => {
                    let (_, right) = binding.expect("checked above");
                    self.wrap(start, BIN_EXPR);
                    let op = kind.fixed_text().unwrap_or("?");
                    self.bump();
                    let rhs = self.operand(right, child_budget, &format!("after `{op}`"));
                    self.finish_node();
                    rhs
                }
            };
            height = height.max(child_height) + 1;
            is_name = false;
        }
        Some(height)
    }

    /// A prefix expression or a primary one, starting with `kind`; returns its height.
    fn prefix_or_primary(&mut self, kind: SyntaxKind, budget: usize) -> usize {
        match kind {
            MINUS | BANG => {
                self.start_node(PREFIX_EXPR);
                self.bump();
                let op = kind.fixed_text().unwrap_or("?");
                let operand = self.operand(PREFIX_BP, budget - 1, &format!("after `{op}`"));
                self.finish_node();
                operand + 1
            }
            INT | DECIMAL | STRING | TRUE_KW | FALSE_KW | NULL_KW => self.leaf(LITERAL),
            DICE => {
                self.check_dice(false);
                self.leaf(DICE_LITERAL)
            }
            IDENT => self.leaf(NAME_REF),
            L_PAREN => self.paren_or_computed_dice(budget),
            L_BRACK => self.list(budget),
            _ => {
                // An `ERROR` token; the lexer has reported it. It stands in for an operand.
                self.leaf(ERROR)
            }
        }
    }

    fn leaf(&mut self, kind: SyntaxKind) -> usize {
        self.start_node(kind);
        self.bump();
        self.finish_node();
        1
    }

    /// Reports the next token (a `DICE` or `DICE_SUFFIX`) if `dice::decode` rejects it.
    fn check_dice(&mut self, suffix: bool) {
        let range = self.current_range();
        let text = &self.text[range];
        if let Err(e) = dice::decode(text) {
            let what = if suffix {
                "dice suffix"
            } else {
                "dice literal"
            };
            let at = &text[e.offset.min(text.len())..];
            let at = if at.is_empty() {
                String::new()
            } else {
                format!(" (at `{at}`)")
            };
            self.error(format!("invalid {what} `{text}`: {}{at}", e.message), range);
        }
    }

    /// `(expr)`, or `(expr)d6kh1` when a dice suffix follows the `)` directly.
    fn paren_or_computed_dice(&mut self, budget: usize) -> usize {
        let start = self.start();
        self.bump();
        let inner = self.operand(0, budget - 1, "after `(`");
        if !self.at(R_PAREN) {
            self.wrap(start, PAREN_EXPR);
            self.expect(R_PAREN, "to close `(`");
            self.finish_node();
            return inner + 1;
        }
        self.bump();
        if self.at(DICE_SUFFIX) {
            self.wrap(start, COMPUTED_DICE);
            self.check_dice(true);
            self.bump();
        } else {
            self.wrap(start, PAREN_EXPR);
        }
        self.finish_node();
        inner + 1
    }

    /// `[a, b]`, with an optional trailing comma.
    fn list(&mut self, budget: usize) -> usize {
        self.start_node(LIST_EXPR);
        self.bump();
        let items = self.comma_separated(R_BRACK, budget - 1, "in a list", true);
        self.expect(R_BRACK, "to close the list");
        self.finish_node();
        items + 1
    }

    /// Items up to `close` (not consumed); returns the highest item's height.
    fn comma_separated(
        &mut self,
        close: SyntaxKind,
        budget: usize,
        context: &str,
        trailing: bool,
    ) -> usize {
        let mut height = 0;
        let mut after_comma = false;
        loop {
            match self.current() {
                Some(kind) if kind == close && (trailing || !after_comma) => break,
                None if !after_comma => break,
                _ => {}
            }
            let context = if after_comma {
                format!("after `,` {context}")
            } else {
                context.to_string()
            };
            height = height.max(self.operand(0, budget, &context));
            if self.abandoned || !self.at(COMMA) {
                break;
            }
            self.bump();
            after_comma = true;
        }
        height
    }

    /// `.name` after the receiver at `start`.
    fn field(&mut self, start: Start) -> usize {
        self.wrap(start, FIELD_EXPR);
        self.bump();
        if self.at(IDENT) {
            self.bump();
        } else {
            let message = format!("expected a field name after `.`, found {}", self.found());
            self.error_here(message);
        }
        self.finish_node();
        0
    }

    /// `[index]` after the base at `start`.
    fn index(&mut self, start: Start, budget: usize) -> usize {
        self.wrap(start, INDEX_EXPR);
        self.bump();
        let index = self.operand(0, budget, "in `[...]`");
        self.expect(R_BRACK, "to close `[`");
        self.finish_node();
        index
    }

    /// `(args)` after the callee at `start`, which must be a plain name.
    fn call(&mut self, start: Start, callee_is_name: bool, budget: usize) -> usize {
        if !callee_is_name {
            let range = TextRange::new(start.offset, self.last_end());
            let callee = self.text[range].trim_end();
            let range = TextRange::at(start.offset, TextSize::new(callee.len() as u32));
            self.error(
                format!("only a function name can be called, not `{callee}`"),
                range,
            );
        }
        self.wrap(start, CALL_EXPR);
        self.start_node(ARG_LIST);
        self.bump();
        let args = self.comma_separated(R_PAREN, budget, "in the arguments", false);
        self.expect(R_PAREN, "to close the arguments");
        self.finish_node();
        self.finish_node();
        args
    }

    /// `? then : else` after the condition at `start`.
    fn ternary(&mut self, start: Start, budget: usize) -> usize {
        self.wrap(start, TERNARY_EXPR);
        self.bump();
        let mut height = self.operand(0, budget, "after `?`");
        if self.at(COLON) {
            self.bump();
            height = height.max(self.operand(TERNARY_BP, budget, "after `:`"));
        } else {
            let message = format!(
                "expected `:` of `condition ? then : else`, found {}",
                self.found()
            );
            self.error_here(message);
        }
        self.finish_node();
        height
    }
}

//! The lexer: cuts a formula's text into tokens, every byte in exactly one token.

use rowan::{TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::{self, *};
use crate::{dice, escape};

/// One token: its kind and its byte range in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: SyntaxKind,
    pub(crate) range: TextRange,
}

/// The tokens of `text`, in order and covering it exactly, and the lexical errors (unknown bytes,
/// unterminated strings, bad escapes), each paired with the index of the token it belongs to.
pub(crate) fn lex(text: &str) -> (Vec<Token>, Vec<(usize, SyntaxError)>) {
    let mut tokens: Vec<Token> = Vec::new();
    let mut errors = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let after_r_paren = tokens.last().is_some_and(|t| t.kind == R_PAREN);
        let (kind, len, token_errors) = token(rest, after_r_paren);
        debug_assert!(len > 0 && rest.is_char_boundary(len));
        let range = TextRange::at(TextSize::new(pos as u32), TextSize::new(len as u32));
        for (error_range, message) in token_errors {
            let start = TextSize::new((pos + error_range.start) as u32);
            let end = TextSize::new((pos + error_range.end) as u32);
            errors.push((
                tokens.len(),
                SyntaxError::syntax(message, TextRange::new(start, end)),
            ));
        }
        tokens.push(Token { kind, range });
        pos += len;
    }
    (tokens, errors)
}

type TokenErrors = Vec<(std::ops::Range<usize>, String)>;

/// The token at the start of `text` (never empty): its kind, length and errors (ranges relative
/// to the token).
fn token(text: &str, after_r_paren: bool) -> (SyntaxKind, usize, TokenErrors) {
    let bytes = text.as_bytes();
    let first = bytes[0];
    let ok = |kind, len| (kind, len, Vec::new());
    match first {
        b' ' | b'\t' | b'\n' | b'\r' => ok(
            WHITESPACE,
            bytes
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count(),
        ),
        b'0'..=b'9' => number_or_dice(text),
        b'\'' | b'"' => string(text),
        b'd' if after_r_paren => match dice::scan_suffix(text) {
            Some(len) => ok(DICE_SUFFIX, len),
            None => ident(text),
        },
        b'A'..=b'Z' | b'a'..=b'z' | b'_' => ident(text),
        _ => punctuation(text),
    }
}

fn number_or_dice(text: &str) -> (SyntaxKind, usize, TokenErrors) {
    if let Some(len) = dice::scan(text) {
        return (DICE, len, Vec::new());
    }
    let bytes = text.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if bytes.get(digits) == Some(&b'.') {
        let fraction = bytes[digits + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if fraction > 0 {
            return (DECIMAL, digits + 1 + fraction, Vec::new());
        }
    }
    (INT, digits, Vec::new())
}

fn string(text: &str) -> (SyntaxKind, usize, TokenErrors) {
    let (len, closed) = escape::scan_string(text);
    let literal = &text[..len];
    let mut errors: TokenErrors = Vec::new();
    if !closed {
        errors.push((
            0..len,
            "unterminated string: it needs a closing quote".to_string(),
        ));
    }
    let (_, escape_errors) = escape::decode(literal);
    errors.extend(escape_errors.into_iter().map(|e| (e.range, e.message)));
    (STRING, len, errors)
}

fn ident(text: &str) -> (SyntaxKind, usize, TokenErrors) {
    let len = text
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let kind = SyntaxKind::from_keyword(&text[..len]).unwrap_or(IDENT);
    (kind, len, Vec::new())
}

fn punctuation(text: &str) -> (SyntaxKind, usize, TokenErrors) {
    let bytes = text.as_bytes();
    let second = bytes.get(1).copied();
    let (kind, len) = match (bytes[0], second) {
        (b'&', Some(b'&')) => (AMP2, 2),
        (b'|', Some(b'|')) => (PIPE2, 2),
        (b'=', Some(b'=')) => (EQ2, 2),
        (b'!', Some(b'=')) => (NEQ, 2),
        (b'<', Some(b'=')) => (LTEQ, 2),
        (b'>', Some(b'=')) => (GTEQ, 2),
        (b'+', _) => (PLUS, 1),
        (b'-', _) => (MINUS, 1),
        (b'*', _) => (STAR, 1),
        (b'/', _) => (SLASH, 1),
        (b'%', _) => (PERCENT, 1),
        (b'!', _) => (BANG, 1),
        (b'<', _) => (LT, 1),
        (b'>', _) => (GT, 1),
        (b'?', _) => (QUESTION, 1),
        (b':', _) => (COLON, 1),
        (b'.', _) => (DOT, 1),
        (b',', _) => (COMMA, 1),
        (b'(', _) => (L_PAREN, 1),
        (b')', _) => (R_PAREN, 1),
        (b'[', _) => (L_BRACK, 1),
        (b']', _) => (R_BRACK, 1),
        _ => return unknown(text),
    };
    (kind, len, Vec::new())
}

/// One character that starts no token, as an `ERROR` token.
fn unknown(text: &str) -> (SyntaxKind, usize, TokenErrors) {
    let c = text
        .chars()
        .next()
        .expect("the lexer never reads past the end");
    let len = c.len_utf8();
    let hint = match c {
        '&' => ": `and` is written `&&`",
        '|' => ": `or` is written `||`",
        '=' => ": equality is written `==`",
        '-' => "",
        _ if !c.is_ascii() => ": a formula outside strings is ASCII",
        _ => "",
    };
    let shown = if c.is_control() || c.is_whitespace() {
        format!("{c:?}")
    } else {
        format!("`{c}`")
    };
    (
        ERROR,
        len,
        vec![(0..len, format!("unexpected character {shown}{hint}"))],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn kinds(text: &str) -> String {
        let (tokens, errors) = lex(text);
        let mut out: Vec<String> = tokens
            .iter()
            .map(|t| format!("{:?} {:?}", t.kind, &text[t.range]))
            .collect();
        out.extend(errors.iter().map(|(i, e)| format!("token {i}: {e}")));
        out.join("\n")
    }

    #[test]
    fn tokens_cover_every_byte() {
        for text in [
            "a && b",
            "'x' #& é|",
            "1.5.2d6kh1",
            "(x)d6 + 'unterminated",
            "\u{0}\u{7f}",
        ] {
            let (tokens, _) = lex(text);
            let mut end = TextSize::new(0);
            for t in &tokens {
                assert_eq!(t.range.start(), end, "{text}");
                end = t.range.end();
            }
            assert_eq!(usize::from(end), text.len(), "{text}");
        }
    }

    #[test]
    fn numbers_dice_and_names() {
        expect![[r#"
            INT "19"
            WHITESPACE " "
            DECIMAL "0.5"
            WHITESPACE " "
            DICE "2d6kh1"
            WHITESPACE " "
            DICE "1d%"
            WHITESPACE " "
            DICE "4dF"
            WHITESPACE " "
            DICE "5d6cs>=5"
            WHITESPACE " "
            INT "1"
            DOT "."
            IDENT "x"
            WHITESPACE " "
            IDENT "has_x2"
            WHITESPACE " "
            IN_KW "in"
            WHITESPACE " "
            IDENT "index"
            WHITESPACE " "
            NULL_KW "null"
            WHITESPACE " "
            IDENT "a"
            MINUS "-"
            IDENT "b"
            WHITESPACE " "
            DICE "1d0""#]]
        .assert_eq(&kinds(
            "19 0.5 2d6kh1 1d% 4dF 5d6cs>=5 1.x has_x2 in index null a-b 1d0",
        ));
    }

    #[test]
    fn computed_dice_suffix_only_right_after_a_paren() {
        expect![[r#"
            L_PAREN "("
            IDENT "n"
            R_PAREN ")"
            DICE_SUFFIX "d6kh1"
            WHITESPACE " "
            L_PAREN "("
            IDENT "n"
            R_PAREN ")"
            WHITESPACE " "
            IDENT "d6"
            WHITESPACE " "
            L_PAREN "("
            IDENT "n"
            R_PAREN ")"
            IDENT "dex""#]]
        .assert_eq(&kinds("(n)d6kh1 (n) d6 (n)dex"));
    }

    #[test]
    fn punctuation_and_errors() {
        expect![[r##"
            AMP2 "&&"
            PIPE2 "||"
            EQ2 "=="
            NEQ "!="
            LTEQ "<="
            GTEQ ">="
            LT "<"
            GT ">"
            BANG "!"
            QUESTION "?"
            COLON ":"
            COMMA ","
            L_BRACK "["
            R_BRACK "]"
            STAR "*"
            SLASH "/"
            PERCENT "%"
            PLUS "+"
            ERROR "&"
            WHITESPACE " "
            ERROR "#"
            ERROR "é"
            ERROR "="
            WHITESPACE " "
            STRING "'a\\q"
            token 18: error 24..25: formula-syntax: unexpected character `&`: `and` is written `&&`
            token 20: error 26..27: formula-syntax: unexpected character `#`
            token 21: error 27..29: formula-syntax: unexpected character `é`: a formula outside strings is ASCII
            token 22: error 29..30: formula-syntax: unexpected character `=`: equality is written `==`
            token 24: error 31..35: formula-syntax: unterminated string: it needs a closing quote
            token 24: error 33..35: formula-syntax: unknown escape `\q` in a string: the escapes are \\ \' \" \n \t \r \u{...}"##]]
        .assert_eq(&kinds("&&||==!=<=>=<>!?:,[]*/%+& #é= 'a\\q"));
    }
}

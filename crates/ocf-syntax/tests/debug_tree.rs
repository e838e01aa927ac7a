//! Snapshots of `Parse::debug_tree` for each construct, each kind of error and the limits.

use expect_test::{Expect, expect};
use ocf_syntax::{Limits, parse, parse_with_limits};

fn check(text: &str, expected: Expect) {
    let parse = parse(text);
    assert_eq!(parse.syntax_node().text().to_string(), text, "lossless");
    expected.assert_eq(&parse.debug_tree());
}

fn check_limits(text: &str, limits: Limits, expected: Expect) {
    let parse = parse_with_limits(text, &limits);
    assert_eq!(parse.syntax_node().text().to_string(), text, "lossless");
    expected.assert_eq(&parse.debug_tree());
}

// Constructs ----------------------------------------------------------------------------------------

#[test]
fn literals() {
    check(
        "[19, 0.5, 'it\\'s', \"x\", true, false, null]",
        expect![[r#"
        FORMULA@0..42
          LIST_EXPR@0..42
            L_BRACK@0..1 "["
            LITERAL@1..3
              INT@1..3 "19"
            COMMA@3..4 ","
            WHITESPACE@4..5 " "
            LITERAL@5..8
              DECIMAL@5..8 "0.5"
            COMMA@8..9 ","
            WHITESPACE@9..10 " "
            LITERAL@10..17
              STRING@10..17 "'it\\'s'"
            COMMA@17..18 ","
            WHITESPACE@18..19 " "
            LITERAL@19..22
              STRING@19..22 "\"x\""
            COMMA@22..23 ","
            WHITESPACE@23..24 " "
            LITERAL@24..28
              TRUE_KW@24..28 "true"
            COMMA@28..29 ","
            WHITESPACE@29..30 " "
            LITERAL@30..35
              FALSE_KW@30..35 "false"
            COMMA@35..36 ","
            WHITESPACE@36..37 " "
            LITERAL@37..41
              NULL_KW@37..41 "null"
            R_BRACK@41..42 "]"
    "#]],
    );
}

#[test]
fn dice_literal() {
    check(
        "2d6kh1 + 1d%",
        expect![[r#"
        FORMULA@0..12
          BIN_EXPR@0..12
            DICE_LITERAL@0..6
              DICE@0..6 "2d6kh1"
            WHITESPACE@6..7 " "
            PLUS@7..8 "+"
            WHITESPACE@8..9 " "
            DICE_LITERAL@9..12
              DICE@9..12 "1d%"
    "#]],
    );
}

#[test]
fn computed_dice() {
    check(
        "(params.rating.value)d6kh1",
        expect![[r#"
        FORMULA@0..26
          COMPUTED_DICE@0..26
            L_PAREN@0..1 "("
            FIELD_EXPR@1..20
              FIELD_EXPR@1..14
                NAME_REF@1..7
                  IDENT@1..7 "params"
                DOT@7..8 "."
                IDENT@8..14 "rating"
              DOT@14..15 "."
              IDENT@15..20 "value"
            R_PAREN@20..21 ")"
            DICE_SUFFIX@21..26 "d6kh1"
    "#]],
    );
}

#[test]
fn paren_then_a_spaced_name_is_not_dice() {
    check(
        "(n) d6",
        expect![[r#"
        FORMULA@0..6
          PAREN_EXPR@0..3
            L_PAREN@0..1 "("
            NAME_REF@1..2
              IDENT@1..2 "n"
            R_PAREN@2..3 ")"
          WHITESPACE@3..4 " "
          ERROR@4..6
            IDENT@4..6 "d6"
        error 4..6: formula-syntax: expected an operator or the end of the formula, found `d6`
    "#]],
    );
}

#[test]
fn field_index_and_call() {
    check(
        "min(1, size(t) - 1) + p.target[0].id",
        expect![[r#"
        FORMULA@0..36
          BIN_EXPR@0..36
            CALL_EXPR@0..19
              NAME_REF@0..3
                IDENT@0..3 "min"
              ARG_LIST@3..19
                L_PAREN@3..4 "("
                LITERAL@4..5
                  INT@4..5 "1"
                COMMA@5..6 ","
                WHITESPACE@6..7 " "
                BIN_EXPR@7..18
                  CALL_EXPR@7..14
                    NAME_REF@7..11
                      IDENT@7..11 "size"
                    ARG_LIST@11..14
                      L_PAREN@11..12 "("
                      NAME_REF@12..13
                        IDENT@12..13 "t"
                      R_PAREN@13..14 ")"
                  WHITESPACE@14..15 " "
                  MINUS@15..16 "-"
                  WHITESPACE@16..17 " "
                  LITERAL@17..18
                    INT@17..18 "1"
                R_PAREN@18..19 ")"
            WHITESPACE@19..20 " "
            PLUS@20..21 "+"
            WHITESPACE@21..22 " "
            FIELD_EXPR@22..36
              INDEX_EXPR@22..33
                FIELD_EXPR@22..30
                  NAME_REF@22..23
                    IDENT@22..23 "p"
                  DOT@23..24 "."
                  IDENT@24..30 "target"
                L_BRACK@30..31 "["
                LITERAL@31..32
                  INT@31..32 "0"
                R_BRACK@32..33 "]"
              DOT@33..34 "."
              IDENT@34..36 "id"
    "#]],
    );
}

#[test]
fn prefix_binds_tighter_than_binary_and_looser_than_postfix() {
    check(
        "-a.b * !c",
        expect![[r#"
        FORMULA@0..9
          BIN_EXPR@0..9
            PREFIX_EXPR@0..4
              MINUS@0..1 "-"
              FIELD_EXPR@1..4
                NAME_REF@1..2
                  IDENT@1..2 "a"
                DOT@2..3 "."
                IDENT@3..4 "b"
            WHITESPACE@4..5 " "
            STAR@5..6 "*"
            WHITESPACE@6..7 " "
            PREFIX_EXPR@7..9
              BANG@7..8 "!"
              NAME_REF@8..9
                IDENT@8..9 "c"
    "#]],
    );
}

#[test]
fn binary_precedence_and_left_associativity() {
    check(
        "a - b - c * d",
        expect![[r#"
        FORMULA@0..13
          BIN_EXPR@0..13
            BIN_EXPR@0..5
              NAME_REF@0..1
                IDENT@0..1 "a"
              WHITESPACE@1..2 " "
              MINUS@2..3 "-"
              WHITESPACE@3..4 " "
              NAME_REF@4..5
                IDENT@4..5 "b"
            WHITESPACE@5..6 " "
            MINUS@6..7 "-"
            WHITESPACE@7..8 " "
            BIN_EXPR@8..13
              NAME_REF@8..9
                IDENT@8..9 "c"
              WHITESPACE@9..10 " "
              STAR@10..11 "*"
              WHITESPACE@11..12 " "
              NAME_REF@12..13
                IDENT@12..13 "d"
    "#]],
    );
}

#[test]
fn logic_comparison_and_membership() {
    check(
        "a || b && 'x' in c == d < e",
        expect![[r#"
        FORMULA@0..27
          BIN_EXPR@0..27
            NAME_REF@0..1
              IDENT@0..1 "a"
            WHITESPACE@1..2 " "
            PIPE2@2..4 "||"
            WHITESPACE@4..5 " "
            BIN_EXPR@5..27
              NAME_REF@5..6
                IDENT@5..6 "b"
              WHITESPACE@6..7 " "
              AMP2@7..9 "&&"
              WHITESPACE@9..10 " "
              BIN_EXPR@10..27
                BIN_EXPR@10..18
                  LITERAL@10..13
                    STRING@10..13 "'x'"
                  WHITESPACE@13..14 " "
                  IN_KW@14..16 "in"
                  WHITESPACE@16..17 " "
                  NAME_REF@17..18
                    IDENT@17..18 "c"
                WHITESPACE@18..19 " "
                EQ2@19..21 "=="
                WHITESPACE@21..22 " "
                BIN_EXPR@22..27
                  NAME_REF@22..23
                    IDENT@22..23 "d"
                  WHITESPACE@23..24 " "
                  LT@24..25 "<"
                  WHITESPACE@25..26 " "
                  NAME_REF@26..27
                    IDENT@26..27 "e"
    "#]],
    );
}

#[test]
fn ternary_nests_to_the_right() {
    check(
        "a ? b : c ? d : e",
        expect![[r#"
        FORMULA@0..17
          TERNARY_EXPR@0..17
            NAME_REF@0..1
              IDENT@0..1 "a"
            WHITESPACE@1..2 " "
            QUESTION@2..3 "?"
            WHITESPACE@3..4 " "
            NAME_REF@4..5
              IDENT@4..5 "b"
            WHITESPACE@5..6 " "
            COLON@6..7 ":"
            WHITESPACE@7..8 " "
            TERNARY_EXPR@8..17
              NAME_REF@8..9
                IDENT@8..9 "c"
              WHITESPACE@9..10 " "
              QUESTION@10..11 "?"
              WHITESPACE@11..12 " "
              NAME_REF@12..13
                IDENT@12..13 "d"
              WHITESPACE@13..14 " "
              COLON@14..15 ":"
              WHITESPACE@15..16 " "
              NAME_REF@16..17
                IDENT@16..17 "e"
    "#]],
    );
}

#[test]
fn lists_with_trailing_comma_and_empty_calls() {
    check(
        "[f(), [], [1,]]",
        expect![[r#"
        FORMULA@0..15
          LIST_EXPR@0..15
            L_BRACK@0..1 "["
            CALL_EXPR@1..4
              NAME_REF@1..2
                IDENT@1..2 "f"
              ARG_LIST@2..4
                L_PAREN@2..3 "("
                R_PAREN@3..4 ")"
            COMMA@4..5 ","
            WHITESPACE@5..6 " "
            LIST_EXPR@6..8
              L_BRACK@6..7 "["
              R_BRACK@7..8 "]"
            COMMA@8..9 ","
            WHITESPACE@9..10 " "
            LIST_EXPR@10..14
              L_BRACK@10..11 "["
              LITERAL@11..12
                INT@11..12 "1"
              COMMA@12..13 ","
              R_BRACK@13..14 "]"
            R_BRACK@14..15 "]"
    "#]],
    );
}

#[test]
fn whitespace_is_kept_around_the_expression() {
    check(
        "  x \n",
        expect![[r#"
        FORMULA@0..5
          WHITESPACE@0..2 "  "
          NAME_REF@2..3
            IDENT@2..3 "x"
          WHITESPACE@3..5 " \n"
    "#]],
    );
}

// Error recovery ------------------------------------------------------------------------------------

#[test]
fn missing_operand() {
    check(
        "a && ",
        expect![[r#"
        FORMULA@0..5
          BIN_EXPR@0..4
            NAME_REF@0..1
              IDENT@0..1 "a"
            WHITESPACE@1..2 " "
            AMP2@2..4 "&&"
          WHITESPACE@4..5 " "
        error 5..5: formula-syntax: expected an expression after `&&`, found the end of the formula
    "#]],
    );
}

#[test]
fn missing_operand_before_an_operator() {
    check(
        "* 2",
        expect![[r#"
        FORMULA@0..3
          ERROR@0..3
            STAR@0..1 "*"
            WHITESPACE@1..2 " "
            INT@2..3 "2"
        error 0..1: formula-syntax: expected an expression, found `*`
    "#]],
    );
}

#[test]
fn missing_close_paren() {
    check(
        "(1 + 2",
        expect![[r#"
        FORMULA@0..6
          PAREN_EXPR@0..6
            L_PAREN@0..1 "("
            BIN_EXPR@1..6
              LITERAL@1..2
                INT@1..2 "1"
              WHITESPACE@2..3 " "
              PLUS@3..4 "+"
              WHITESPACE@4..5 " "
              LITERAL@5..6
                INT@5..6 "2"
        error 6..6: formula-syntax: expected `)` to close `(`, found the end of the formula
    "#]],
    );
}

#[test]
fn missing_close_bracket_and_arguments() {
    check(
        "f([1, 2",
        expect![[r#"
        FORMULA@0..7
          CALL_EXPR@0..7
            NAME_REF@0..1
              IDENT@0..1 "f"
            ARG_LIST@1..7
              L_PAREN@1..2 "("
              LIST_EXPR@2..7
                L_BRACK@2..3 "["
                LITERAL@3..4
                  INT@3..4 "1"
                COMMA@4..5 ","
                WHITESPACE@5..6 " "
                LITERAL@6..7
                  INT@6..7 "2"
        error 7..7: formula-syntax: expected `]` to close the list, found the end of the formula
        error 7..7: formula-syntax: expected `)` to close the arguments, found the end of the formula
    "#]],
    );
}

#[test]
fn stray_token_after_the_formula() {
    check(
        "1 2 + 3",
        expect![[r#"
        FORMULA@0..7
          LITERAL@0..1
            INT@0..1 "1"
          WHITESPACE@1..2 " "
          ERROR@2..7
            INT@2..3 "2"
            WHITESPACE@3..4 " "
            PLUS@4..5 "+"
            WHITESPACE@5..6 " "
            INT@6..7 "3"
        error 2..3: formula-syntax: expected an operator or the end of the formula, found `2`
    "#]],
    );
}

#[test]
fn unmatched_close_paren() {
    check(
        "a)",
        expect![[r#"
        FORMULA@0..2
          NAME_REF@0..1
            IDENT@0..1 "a"
          ERROR@1..2
            R_PAREN@1..2 ")"
        error 1..2: formula-syntax: unmatched `)`
    "#]],
    );
}

#[test]
fn unknown_characters() {
    check(
        "a & b # c",
        expect![[r##"
        FORMULA@0..9
          NAME_REF@0..1
            IDENT@0..1 "a"
          WHITESPACE@1..2 " "
          ERROR@2..9
            ERROR@2..3 "&"
            WHITESPACE@3..4 " "
            IDENT@4..5 "b"
            WHITESPACE@5..6 " "
            ERROR@6..7 "#"
            WHITESPACE@7..8 " "
            IDENT@8..9 "c"
        error 2..3: formula-syntax: unexpected character `&`: `and` is written `&&`
        error 6..7: formula-syntax: unexpected character `#`
    "##]],
    );
}

#[test]
fn unterminated_string() {
    check(
        "'damage. + x",
        expect![[r#"
        FORMULA@0..12
          LITERAL@0..12
            STRING@0..12 "'damage. + x"
        error 0..12: formula-syntax: unterminated string: it needs a closing quote
    "#]],
    );
}

#[test]
fn bad_escape() {
    check(
        "'a\\qb' + '\\u{110000}'",
        expect![[r#"
        FORMULA@0..21
          BIN_EXPR@0..21
            LITERAL@0..6
              STRING@0..6 "'a\\qb'"
            WHITESPACE@6..7 " "
            PLUS@7..8 "+"
            WHITESPACE@8..9 " "
            LITERAL@9..21
              STRING@9..21 "'\\u{110000}'"
        error 2..4: formula-syntax: unknown escape `\q` in a string: the escapes are \\ \' \" \n \t \r \u{...}
        error 10..20: formula-syntax: `\u{110000}` is not a Unicode character: write one to six hex digits
    "#]],
    );
}

#[test]
fn bad_dice_literals() {
    check(
        "2d6kx + 1d0 + (n)d6q",
        expect![[r#"
        FORMULA@0..20
          BIN_EXPR@0..20
            BIN_EXPR@0..11
              DICE_LITERAL@0..5
                DICE@0..5 "2d6kx"
              WHITESPACE@5..6 " "
              PLUS@6..7 "+"
              WHITESPACE@7..8 " "
              DICE_LITERAL@8..11
                DICE@8..11 "1d0"
            WHITESPACE@11..12 " "
            PLUS@12..13 "+"
            WHITESPACE@13..14 " "
            COMPUTED_DICE@14..20
              L_PAREN@14..15 "("
              NAME_REF@15..16
                IDENT@15..16 "n"
              R_PAREN@16..17 ")"
              DICE_SUFFIX@17..20 "d6q"
        error 0..5: formula-syntax: invalid dice literal `2d6kx`: unknown dice modifier (at `kx`)
        error 8..11: formula-syntax: invalid dice literal `1d0`: a die needs at least one side (at `0`)
        error 17..20: formula-syntax: invalid dice suffix `d6q`: unknown dice modifier (at `q`)
    "#]],
    );
}

#[test]
fn only_a_name_can_be_called() {
    check(
        "a.b(1)",
        expect![[r#"
        FORMULA@0..6
          CALL_EXPR@0..6
            FIELD_EXPR@0..3
              NAME_REF@0..1
                IDENT@0..1 "a"
              DOT@1..2 "."
              IDENT@2..3 "b"
            ARG_LIST@3..6
              L_PAREN@3..4 "("
              LITERAL@4..5
                INT@4..5 "1"
              R_PAREN@5..6 ")"
        error 0..3: formula-syntax: only a function name can be called, not `a.b`
    "#]],
    );
}

#[test]
fn missing_field_name() {
    check(
        "a. + 1",
        expect![[r#"
        FORMULA@0..6
          BIN_EXPR@0..6
            FIELD_EXPR@0..2
              NAME_REF@0..1
                IDENT@0..1 "a"
              DOT@1..2 "."
            WHITESPACE@2..3 " "
            PLUS@3..4 "+"
            WHITESPACE@4..5 " "
            LITERAL@5..6
              INT@5..6 "1"
        error 3..4: formula-syntax: expected a field name after `.`, found `+`
    "#]],
    );
}

#[test]
fn ternary_without_else() {
    check(
        "a ? b",
        expect![[r#"
        FORMULA@0..5
          TERNARY_EXPR@0..5
            NAME_REF@0..1
              IDENT@0..1 "a"
            WHITESPACE@1..2 " "
            QUESTION@2..3 "?"
            WHITESPACE@3..4 " "
            NAME_REF@4..5
              IDENT@4..5 "b"
        error 5..5: formula-syntax: expected `:` of `condition ? then : else`, found the end of the formula
    "#]],
    );
}

#[test]
fn empty_formula() {
    check(
        "  ",
        expect![[r#"
        FORMULA@0..2
          WHITESPACE@0..2 "  "
        error 2..2: formula-syntax: the formula is empty: expected an expression
    "#]],
    );
}

#[test]
fn trailing_comma_in_a_call() {
    check(
        "f(a,)",
        expect![[r#"
        FORMULA@0..5
          CALL_EXPR@0..5
            NAME_REF@0..1
              IDENT@0..1 "f"
            ARG_LIST@1..5
              L_PAREN@1..2 "("
              NAME_REF@2..3
                IDENT@2..3 "a"
              COMMA@3..4 ","
              R_PAREN@4..5 ")"
        error 4..5: formula-syntax: expected an expression after `,` in the arguments, found `)`
    "#]],
    );
}

// Limits --------------------------------------------------------------------------------------------

#[test]
fn too_long() {
    check_limits(
        "1 + 2",
        Limits {
            max_formula_length: 4,
            ..Limits::default()
        },
        expect![[r#"
        FORMULA@0..5
          ERROR@0..5
            ERROR@0..5 "1 + 2"
        error 0..5: safety-limit-exceeded: the formula is 5 bytes long, more than the limit of 4 (maxFormulaLength)
    "#]],
    );
}

#[test]
fn left_associative_chain_deeper_than_the_limit() {
    check_limits(
        "1+1+1+1",
        Limits {
            max_formula_depth: 3,
            ..Limits::default()
        },
        expect![[r#"
        FORMULA@0..7
          BIN_EXPR@0..5
            BIN_EXPR@0..3
              LITERAL@0..1
                INT@0..1 "1"
              PLUS@1..2 "+"
              LITERAL@2..3
                INT@2..3 "1"
            PLUS@3..4 "+"
            LITERAL@4..5
              INT@4..5 "1"
          ERROR@5..7
            PLUS@5..6 "+"
            INT@6..7 "1"
        error 5..6: safety-limit-exceeded: the formula nests deeper than the limit of 3 (maxFormulaDepth)
    "#]],
    );
}

#[test]
fn nesting_deeper_than_the_limit() {
    check_limits(
        "((1))) + #",
        Limits {
            max_formula_depth: 2,
            ..Limits::default()
        },
        expect![[r##"
        FORMULA@0..10
          PAREN_EXPR@0..10
            L_PAREN@0..1 "("
            PAREN_EXPR@1..10
              L_PAREN@1..2 "("
              ERROR@2..10
                INT@2..3 "1"
                R_PAREN@3..4 ")"
                R_PAREN@4..5 ")"
                R_PAREN@5..6 ")"
                WHITESPACE@6..7 " "
                PLUS@7..8 "+"
                WHITESPACE@8..9 " "
                ERROR@9..10 "#"
        error 2..3: safety-limit-exceeded: the formula nests deeper than the limit of 2 (maxFormulaDepth)
    "##]],
    );
}

#[test]
fn exactly_at_the_limit() {
    check_limits(
        "-(1)",
        Limits {
            max_formula_depth: 3,
            ..Limits::default()
        },
        expect![[r#"
        FORMULA@0..4
          PREFIX_EXPR@0..4
            MINUS@0..1 "-"
            PAREN_EXPR@1..4
              L_PAREN@1..2 "("
              LITERAL@2..3
                INT@2..3 "1"
              R_PAREN@3..4 ")"
    "#]],
    );
}

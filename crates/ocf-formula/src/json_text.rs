//! JSON text with every float in plain notation: how the front ends print values.
//!
//! formulas.md gives a decimal's JSON as "a number with a point: `7.0`, `0.5`". serde_json writes
//! an `f64` in the shortest digits that read back, but with an exponent for small and large
//! magnitudes (`0.000001` prints `1e-6`, `1e16` prints `1e+16`). These printers are serde_json's
//! compact and pretty printers except for floats, which they write as Rust's `Display` does: the
//! same shortest digits, never an exponent, and `.0` after a whole number so that it stays a
//! decimal.

use std::fmt::Display;
use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter, Serializer};

/// `value` as one line of JSON, floats in plain notation.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, CompactFormatter)
}

/// `value` as indented JSON, floats in plain notation.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, PrettyFormatter::new())
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, layout: F) -> serde_json::Result<String> {
    let mut out = Vec::new();
    value.serialize(&mut Serializer::with_formatter(
        &mut out,
        PlainFloats(layout),
    ))?;
    // serde_json writes only UTF-8.
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// A float's text without an exponent, with a point. serde_json writes non-finite floats as
/// `null` itself, so only finite values get here.
fn plain(value: impl Display) -> String {
    let mut text = value.to_string();
    if !text.contains('.') {
        text.push_str(".0");
    }
    text
}

/// Wraps a layout (compact or pretty), replacing how it writes floats.
struct PlainFloats<F>(F);

impl<F: Formatter> Formatter for PlainFloats<F> {
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        w.write_all(plain(value).as_bytes())
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(plain(value).as_bytes())
    }

    // The layout's methods, passed on.

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_plainly_with_a_point() {
        let value = json!([
            0.000001, -0.000009, 0.00001, 7.0, -0.0, 1e16, 1e21, 0.5, 7, -3
        ]);
        assert_eq!(
            to_string(&value).unwrap(),
            "[0.000001,-0.000009,0.00001,7.0,-0.0,10000000000000000.0,\
             1000000000000000000000.0,0.5,7,-3]"
        );
        // serde_json's own text, for comparison: the exponent these printers avoid.
        assert_eq!(serde_json::to_string(&json!(0.000001)).unwrap(), "1e-6");
        assert_eq!(serde_json::to_string(&json!(0.00001)).unwrap(), "0.00001");
        assert_eq!(serde_json::to_string(&json!(1e16)).unwrap(), "1e+16");
        assert_eq!(
            serde_json::to_string(&json!(1e15)).unwrap(),
            "1000000000000000.0"
        );
    }

    #[test]
    fn layouts_are_serde_jsons() {
        let value = json!({ "a": [1, 0.000002, { "b": null }], "c": "x" });
        let expected = serde_json::to_string_pretty(&value)
            .unwrap()
            .replace("2e-6", "0.000002");
        assert_eq!(to_string_pretty(&value).unwrap(), expected);
        let expected = serde_json::to_string(&value)
            .unwrap()
            .replace("2e-6", "0.000002");
        assert_eq!(to_string(&value).unwrap(), expected);
    }
}

//! The protocol's framing on a byte stream (`Content-Length` headers, then a JSON body), read so
//! that no input ends the server but the stream's end or `exit`: a malformed header or body is
//! answered with a `-32700` parse error (JSON-RPC's, with a null id) and the reader goes on to the
//! next frame; a JSON value that is no message is answered with `-32600`. A lone UTF-16 surrogate
//! escape (`"\ud83d"`, which JavaScript clients send for half an emoji) is read as U+FFFD, as
//! JavaScript itself would print it.
//!
//! lsp-server's own stdio transport ends its reader thread on the first malformed frame, which
//! closes the connection: this one stands in for it and hands the same [`Connection`] to the
//! server loop.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::{Connection, Message};
use serde_json::{Value, json};

/// The largest body read; a longer `Content-Length` is refused (and its body skipped).
pub const MAX_BODY: usize = 256 << 20;
/// The longest header line read.
const MAX_HEADER_LINE: usize = 8 << 10;

/// What one frame held.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A frame the server answers with an error: its code and message, and the id when the
    /// body held one.
    Refused {
        code: i32,
        message: String,
        id: Value,
    },
    /// The stream ended.
    End,
}

/// Reads one frame. I/O errors end the stream; anything else malformed is a refused frame.
pub fn read_frame(input: &mut impl BufRead) -> Frame {
    let mut length: Option<usize> = None;
    let mut bad_header: Option<String> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        match input
            .by_ref()
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            // Blank lines between frames are skipped.
            continue;
        }
        saw_header = true;
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(format!("a bad Content-Length: {line:?}")),
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("a malformed header line: {line:?}")),
        }
    }
    let refused = |message: String| Frame::Refused {
        code: -32700,
        message,
        id: Value::Null,
    };
    if let Some(message) = bad_header {
        return refused(message);
    }
    let Some(length) = length else {
        return refused("a frame without Content-Length".to_owned());
    };
    if length > MAX_BODY {
        // Skipped, so the next frame is read from its start.
        let skipped = io::copy(&mut input.by_ref().take(length as u64), &mut io::sink());
        if skipped.map_or(true, |n| n < length as u64) {
            return Frame::End;
        }
        return refused(format!(
            "a body of {length} bytes, over the server's {MAX_BODY}"
        ));
    }
    let mut body = vec![0; length];
    if input.read_exact(&mut body).is_err() {
        return Frame::End;
    }
    parse_body(&body)
}

/// A frame's body as a message.
pub fn parse_body(body: &[u8]) -> Frame {
    let text = String::from_utf8_lossy(body);
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(first) => match serde_json::from_str(&lone_surrogates_replaced(&text)) {
            Ok(value) => value,
            Err(_) => {
                return Frame::Refused {
                    code: -32700,
                    message: format!("the body is not JSON: {first}"),
                    id: Value::Null,
                };
            }
        },
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    match serde_json::from_value::<Message>(value) {
        Ok(message) => Frame::Message(message),
        Err(error) => Frame::Refused {
            code: -32600,
            message: format!("not a request, response or notification: {error}"),
            id: if id.is_string() || id.is_number() {
                id
            } else {
                Value::Null
            },
        },
    }
}

/// The text with each `\uXXXX` escape of a UTF-16 surrogate that is not half of a pair replaced
/// by `\ufffd`.
fn lone_surrogates_replaced(text: &str) -> String {
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = text.get(at + 2..at + 6)?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            // An escaped backslash is not the start of an escape.
            if bytes.get(i + 1) == Some(&b'\\') {
                i += 2;
                continue;
            }
            if let Some(u) = unit(i) {
                let high = (0xD800..0xDC00).contains(&u);
                let low = (0xDC00..0xE000).contains(&u);
                if high && unit(i + 6).is_some_and(|n| (0xDC00..0xE000).contains(&n)) {
                    i += 12;
                    continue;
                }
                if high || low {
                    out.push_str(&text[last..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    out
}

/// Writes one frame.
pub fn write_frame(output: &mut impl Write, body: &Value) -> io::Result<()> {
    let text = serde_json::to_string(body)?;
    write!(output, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    output.flush()
}

/// The threads serving a connection over a byte stream.
pub struct Io {
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Io {
    /// Waits for the reader (the stream's end or `exit`) and the writer (every reply written).
    pub fn join(self) {
        let _ = self.reader.join();
        let _ = self.writer.join();
    }
}

/// A connection over `input` and `output`: a reader thread frames the input and answers refused
/// frames itself; a writer thread writes the server's messages.
pub fn connect<R, W>(input: R, output: W) -> (Connection, Io)
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let output = Arc::new(Mutex::new(output));
    let (to_server, from_reader): (Sender<Message>, Receiver<Message>) = unbounded();
    let (to_writer, from_server): (Sender<Message>, Receiver<Message>) = unbounded();
    let reader_output = output.clone();
    let reader = std::thread::spawn(move || {
        let mut input = BufReader::new(input);
        loop {
            match read_frame(&mut input) {
                Frame::End => break,
                Frame::Refused { code, message, id } => {
                    tracing::warn!(code, %message, "refused a frame");
                    let reply = json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": { "code": code, "message": message },
                    });
                    let mut out = reader_output.lock().unwrap_or_else(|e| e.into_inner());
                    if write_frame(&mut *out, &reply).is_err() {
                        break;
                    }
                }
                Frame::Message(message) => {
                    let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                    if to_server.send(message).is_err() || exit {
                        break;
                    }
                }
            }
        }
    });
    let writer = std::thread::spawn(move || {
        for message in from_server {
            let Ok(mut body) = serde_json::to_value(&message) else {
                continue;
            };
            if let Some(object) = body.as_object_mut() {
                object.insert("jsonrpc".to_owned(), json!("2.0"));
            }
            let mut out = output.lock().unwrap_or_else(|e| e.into_inner());
            if write_frame(&mut *out, &body).is_err() {
                break;
            }
        }
    });
    (
        Connection {
            sender: to_writer,
            receiver: from_reader,
        },
        Io { reader, writer },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(lone_surrogates_replaced(r#""a\ud83d b""#), r#""a\ufffd b""#);
        assert_eq!(
            lone_surrogates_replaced(r#""\ud83d\ude00""#),
            r#""\ud83d\ude00""#
        );
        assert_eq!(lone_surrogates_replaced(r#""\\ud83d""#), r#""\\ud83d""#);
        assert_eq!(lone_surrogates_replaced(r#""\ude00x""#), r#""\ufffdx""#);
    }
}

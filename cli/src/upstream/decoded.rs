//! Answers a server sent compressed at the endpoint, although the proxy asked
//! for none (it drops the client's `Accept-Encoding` where it reads answers):
//! a `gzip` or `deflate` body is decoded before the layer reads it, a JSON body
//! or an event stream alike, and goes to the client decoded, without
//! `Content-Encoding` (nor `Content-Length`, or a digest of the encoded bytes):
//! the client never gets a body its headers do not describe. A body in any
//! other encoding (`br`, `zstd`, several encodings in a row) is not read: it
//! passes to the client as it is, and the log says so (once a second at most).
//!
//! `deflate` is the zlib format (RFC 9110 section 8.4.1.2); a raw deflate
//! stream, which some servers send under that name, is told apart by the
//! zlib header it lacks, as browsers do. Several gzip members in a row are
//! decoded one after the other. A body whose bytes are not what their
//! encoding says (corrupt, or cut before the format's end) is a body cut
//! short. The decoded bytes are handed on about 64 KiB at a time at most, so that a
//! small body that decodes to a great deal (a "zip bomb") is bounded by the
//! cap of the reader ([`MAX_MESSAGE_BYTES`] for a JSON answer or an event)
//! before it is held whole; a compressed body that decodes to nothing for
//! more than [`MAX_MESSAGE_BYTES`] is cut.
//!
//! A body that is not encoded is read as it comes: it is not wrapped, and no
//! decoder is made for it; the cost is one lookup of `Content-Encoding`.

use std::io::Write;
use std::pin::Pin;
use std::sync::{LazyLock, Mutex};
use std::task::{Context, Poll, ready};

use flate2::write::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};
use hyper::Response;
use hyper::body::{Body, Bytes, Frame};
use hyper::header::{self, HeaderMap, HeaderName};

use crate::http::body::MAX_MESSAGE_BYTES;
use crate::http::headers::{MediaType, media_type};
use crate::throttled_log::{ThrottledLog, log_throttled};
use crate::upstream::client::UpstreamBody;

/// The media type of the upstream's response to a request at the endpoint,
/// when it is an answer the proxy reads: a 2xx or 5xx in JSON or as an event
/// stream, or any other 5xx, which may hold one. `None` for anything else (a
/// 4xx, a redirect, another type), which the client gets as it is.
pub(crate) fn answer_type<B>(response: &Response<B>) -> Option<MediaType> {
    let status = response.status();
    let media_type = media_type(response.headers());
    let is_answer = match media_type {
        MediaType::EventStream | MediaType::Json => status.is_success() || status.is_server_error(),
        MediaType::Other => status.is_server_error(),
    };
    is_answer.then_some(media_type)
}

/// How the proxy reads a body, by its `Content-Encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Not encoded: read as it comes, with no decoder.
    Identity,
    /// Read [`decoded`].
    Decoded(Format),
    /// In an encoding the proxy does not decode (logged): not read.
    Other,
}

/// How the proxy reads a body sent with `headers`; an encoding it does not
/// decode is logged.
pub(crate) fn encoding(headers: &HeaderMap) -> Encoding {
    match coding(headers) {
        Coding::Identity => Encoding::Identity,
        Coding::Gzip => Encoding::Decoded(Format::Gzip),
        Coding::Deflate => Encoding::Decoded(Format::Deflate),
        Coding::Other => {
            log_other_encoding(headers);
            Encoding::Other
        }
    }
}

/// `response`, its body decoded from `format`, without the headers that
/// described the encoded bytes.
pub(crate) fn decoded<B>(response: Response<B>, format: Format) -> Response<Decoded<B>> {
    let (mut parts, body) = response.into_parts();
    for name in ENCODED_ONLY {
        parts.headers.remove(name);
    }
    let decoder = Box::new(Decoder::new(format));
    Response::from_parts(parts, Decoded { body, decoder })
}

/// The headers that describe the encoded bytes, which a decoded body no
/// longer matches.
const ENCODED_ONLY: [HeaderName; 4] = [
    header::CONTENT_ENCODING,
    header::CONTENT_LENGTH,
    HeaderName::from_static("content-digest"),
    HeaderName::from_static("digest"),
];

/// What `Content-Encoding` says of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    /// None, or `identity`.
    Identity,
    /// `gzip` (or `x-gzip`).
    Gzip,
    /// `deflate`.
    Deflate,
    /// Anything else, or more than one.
    Other,
}

fn coding(headers: &HeaderMap) -> Coding {
    // One lookup for the answers that hold none, nearly all.
    let Some(value) = headers.get(header::CONTENT_ENCODING) else {
        return Coding::Identity;
    };
    if headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .nth(1)
        .is_some()
    {
        return Coding::Other;
    }
    let value = value.as_bytes().trim_ascii();
    if value.eq_ignore_ascii_case(b"gzip") || value.eq_ignore_ascii_case(b"x-gzip") {
        Coding::Gzip
    } else if value.eq_ignore_ascii_case(b"deflate") {
        Coding::Deflate
    } else if value.is_empty() || value.eq_ignore_ascii_case(b"identity") {
        Coding::Identity
    } else {
        Coding::Other
    }
}

/// Logs an answer in an encoding the proxy does not decode.
fn log_other_encoding(headers: &HeaderMap) {
    static LOG: LazyLock<Mutex<ThrottledLog>> =
        LazyLock::new(|| Mutex::new(ThrottledLog::new(OTHER_ENCODING)));
    let encoding: Vec<&str> = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .map(|value| value.to_str().unwrap_or("?"))
        .collect();
    log_throttled(&LOG, || {
        format!(
            "{OTHER_ENCODING} ({}): passed on as the server sent it, not rewrapped",
            encoding.join(", ")
        )
    });
}

/// How the log line of an answer in an encoding the proxy does not decode
/// begins.
const OTHER_ENCODING: &str = "an answer in a Content-Encoding the proxy does not decode";

/// An upstream's response body, decoded.
#[derive(Debug)]
pub(crate) struct Decoded<B = UpstreamBody> {
    body: B,
    decoder: Box<Decoder>,
}

impl<B> Body for Decoded<B>
where
    B: Body<Data = Bytes, Error = hyper::Error> + Unpin,
{
    type Data = Bytes;
    type Error = ReadError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ReadError>>> {
        let Self { body, decoder } = &mut *self;
        loop {
            match decoder.next() {
                Ok(Some(bytes)) => return Poll::Ready(Some(Ok(Frame::data(bytes)))),
                Ok(None) if decoder.is_done() => return Poll::Ready(None),
                Ok(None) => {}
                Err(error) => return Poll::Ready(Some(Err(ReadError::Decode(error)))),
            }
            match ready!(Pin::new(&mut *body).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        decoder.push(data);
                    }
                }
                Some(Err(error)) => return Poll::Ready(Some(Err(ReadError::Upstream(error)))),
                None => decoder.end(),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.decoder.is_done()
    }
}

/// A body the proxy read part of and keeps for later, whichever it was: as it
/// came, or decoded.
#[derive(Debug)]
pub(crate) enum ReadBody {
    AsItCame(UpstreamBody),
    Decoded(Decoded),
}

impl From<UpstreamBody> for ReadBody {
    fn from(body: UpstreamBody) -> Self {
        Self::AsItCame(body)
    }
}

impl From<Decoded> for ReadBody {
    fn from(body: Decoded) -> Self {
        Self::Decoded(body)
    }
}

impl Body for ReadBody {
    type Data = Bytes;
    type Error = ReadError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ReadError>>> {
        match self.get_mut() {
            Self::AsItCame(body) => Pin::new(body).poll_frame(cx).map_err(ReadError::Upstream),
            Self::Decoded(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::AsItCame(body) => body.is_end_stream(),
            Self::Decoded(body) => body.is_end_stream(),
        }
    }
}

/// Why a body could not be read to its end.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The upstream's connection failed, or cut the body.
    Upstream(hyper::Error),
    /// The bytes are not what their `Content-Encoding` says.
    Decode(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Upstream(error) => error.fmt(formatter),
            Self::Decode(error) => write!(formatter, "cannot decode the body: {error}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Upstream(error) => error.source(),
            Self::Decode(error) => error.source(),
        }
    }
}

/// The formats the proxy decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Gzip,
    Deflate,
}

/// A decoder fed with a body's frames as they come.
#[derive(Debug)]
struct Decoder {
    /// `None` until the first bytes of a `deflate` body tell which kind it is.
    inflater: Option<Inflater>,
    /// Encoded bytes not yet decoded.
    input: Bytes,
    /// The encoded bytes decoded since the last decoded byte.
    input_without_output: usize,
    /// Whether any encoded byte came.
    any_input: bool,
    /// The body has ended: nothing is pushed any more.
    ended: bool,
    /// The format's end was reached and checked.
    finished: bool,
}

impl Decoder {
    fn new(format: Format) -> Self {
        Self {
            inflater: match format {
                Format::Gzip => Some(Inflater::Gzip(MultiGzDecoder::new(Vec::new()))),
                Format::Deflate => None,
            },
            input: Bytes::new(),
            input_without_output: 0,
            any_input: false,
            ended: false,
            finished: false,
        }
    }

    /// Adds a frame of the body; called once the last one is decoded.
    fn push(&mut self, frame: Bytes) {
        self.any_input |= !frame.is_empty();
        if self.input.is_empty() {
            self.input = frame;
        } else {
            // A `deflate` body's first byte, alone in its frame.
            self.input = [&self.input[..], &frame[..]].concat().into();
        }
    }

    /// The body has ended.
    fn end(&mut self) {
        self.ended = true;
    }

    fn is_done(&self) -> bool {
        self.finished
    }

    /// The next decoded bytes, when the frames pushed hold some; once the body
    /// has ended, what the format's end holds.
    fn next(&mut self) -> std::io::Result<Option<Bytes>> {
        if self.ended && !self.any_input {
            // An empty body, which needs no format.
            self.finished = true;
            return Ok(None);
        }
        let inflater = match &mut self.inflater {
            Some(inflater) => inflater,
            None => match Inflater::for_deflate(&self.input, self.ended) {
                Some(inflater) => self.inflater.insert(inflater),
                None => return Ok(None),
            },
        };
        while !self.input.is_empty() {
            let used = inflater.write(&self.input)?;
            if used == 0 {
                // The format ended: what follows it is not read.
                self.input = Bytes::new();
                break;
            }
            let _ = self.input.split_to(used);
            let output = inflater.output()?;
            if !output.is_empty() {
                self.input_without_output = 0;
                return Ok(Some(Bytes::from(std::mem::take(output))));
            }
            self.input_without_output += used;
            if self.input_without_output > MAX_MESSAGE_BYTES {
                return Err(std::io::Error::other(format!(
                    "more than {MAX_MESSAGE_BYTES} encoded bytes decode to nothing"
                )));
            }
        }
        if !self.ended || self.finished {
            return Ok(None);
        }
        inflater.finish()?;
        self.finished = true;
        let output = std::mem::take(inflater.output()?);
        Ok((!output.is_empty()).then(|| Bytes::from(output)))
    }
}

/// flate2's decoders, each writing what it decodes into a `Vec`.
#[derive(Debug)]
enum Inflater {
    Gzip(MultiGzDecoder<Vec<u8>>),
    Zlib(ZlibDecoder<Vec<u8>>),
    Raw(DeflateDecoder<Vec<u8>>),
}

impl Inflater {
    /// The decoder for a `deflate` body that starts with `first`: zlib when
    /// its first two bytes are a zlib header, raw deflate otherwise; `None`
    /// while fewer than two bytes came (and the body goes on).
    fn for_deflate(first: &[u8], ended: bool) -> Option<Self> {
        match first {
            [method, flags, ..] => {
                let header = u16::from(*method) << 8 | u16::from(*flags);
                Some(if method & 0x0F == 8 && header % 31 == 0 {
                    Self::Zlib(ZlibDecoder::new(Vec::new()))
                } else {
                    Self::Raw(DeflateDecoder::new(Vec::new()))
                })
            }
            [_] if ended => Some(Self::Raw(DeflateDecoder::new(Vec::new()))),
            _ => None,
        }
    }

    /// Decodes from the start of `input`: how many bytes were read (at most
    /// 32 KiB decoded, flate2's buffer); 0 once the format has ended.
    fn write(&mut self, input: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Gzip(decoder) => decoder.write(input),
            Self::Zlib(decoder) => decoder.write(input),
            Self::Raw(decoder) => decoder.write(input),
        }
    }

    /// What was decoded so far and not taken.
    fn output(&mut self) -> std::io::Result<&mut Vec<u8>> {
        Ok(match self {
            Self::Gzip(decoder) => {
                decoder.flush()?;
                decoder.get_mut()
            }
            Self::Zlib(decoder) => {
                decoder.flush()?;
                decoder.get_mut()
            }
            Self::Raw(decoder) => {
                decoder.flush()?;
                decoder.get_mut()
            }
        })
    }

    /// Checks that the format ended where the body did (and, for gzip, its
    /// checksum and length).
    fn finish(&mut self) -> std::io::Result<()> {
        match self {
            Self::Gzip(decoder) => decoder.try_finish(),
            Self::Zlib(decoder) => decoder.try_finish(),
            Self::Raw(decoder) => decoder.try_finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use flate2::Compression;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use http_body_util::BodyExt;

    use super::*;

    /// A body that hands on `frames` one by one.
    struct Frames(VecDeque<Bytes>);

    impl Body for Frames {
        type Data = Bytes;
        type Error = hyper::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
            Poll::Ready(self.0.pop_front().map(|frame| Ok(Frame::data(frame))))
        }
    }

    fn encoded(format: &str, text: &[u8]) -> Vec<u8> {
        fn done<W: Write>(mut encoder: W, text: &[u8]) -> W {
            encoder.write_all(text).unwrap();
            encoder
        }
        let level = Compression::default();
        match format {
            "gzip" => done(GzEncoder::new(Vec::new(), level), text).finish(),
            "zlib" => done(ZlibEncoder::new(Vec::new(), level), text).finish(),
            _ => done(DeflateEncoder::new(Vec::new(), level), text).finish(),
        }
        .unwrap()
    }

    /// `bytes` cut into `frames` as a body, read through a decoder of
    /// `format`: each frame handed on, or the error.
    async fn decode(format: Format, frames: &[&[u8]]) -> Result<Vec<Bytes>, ReadError> {
        let frames = frames.iter().map(|frame| Bytes::copy_from_slice(frame));
        let mut body = Decoded {
            body: Frames(frames.collect()),
            decoder: Box::new(Decoder::new(format)),
        };
        let mut out = Vec::new();
        while let Some(frame) = body.frame().await {
            out.push(frame?.into_data().expect("data"));
        }
        assert!(body.is_end_stream());
        Ok(out)
    }

    #[tokio::test]
    async fn gzip_zlib_and_raw_deflate_decode_wherever_their_bytes_are_cut() {
        let text = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\r".repeat(20);
        for (name, format) in [
            ("gzip", Format::Gzip),
            ("zlib", Format::Deflate),
            ("raw", Format::Deflate),
        ] {
            let bytes = encoded(name, &text);
            for cut in 0..=bytes.len() {
                let frames = decode(format, &[&bytes[..cut], &bytes[cut..]]).await;
                let frames = frames.unwrap_or_else(|error| panic!("{name} cut at {cut}: {error}"));
                assert_eq!(frames.concat(), text, "{name} cut at {cut}");
            }
        }
    }

    #[tokio::test]
    async fn gzip_members_in_a_row_decode_one_after_the_other() {
        let bytes = [encoded("gzip", b"first "), encoded("gzip", b"second")].concat();
        let frames = decode(Format::Gzip, &[&bytes]).await.unwrap();
        assert_eq!(frames.concat(), b"first second");
    }

    #[tokio::test]
    async fn a_body_cut_before_its_formats_end_or_corrupt_is_an_error() {
        for (name, format) in [("gzip", Format::Gzip), ("zlib", Format::Deflate)] {
            let bytes = encoded(name, b"some text that is cut");
            let cut = decode(format, &[&bytes[..bytes.len() - 1]]).await;
            assert!(matches!(cut, Err(ReadError::Decode(_))), "{name}: {cut:?}");
        }
        let not_gzip = decode(Format::Gzip, &[b"{\"jsonrpc\":\"2.0\"}"]).await;
        assert!(
            matches!(not_gzip, Err(ReadError::Decode(_))),
            "{not_gzip:?}"
        );
        for format in [Format::Gzip, Format::Deflate] {
            assert_eq!(decode(format, &[]).await.unwrap(), Vec::<Bytes>::new());
        }
    }

    #[tokio::test]
    async fn decoded_bytes_come_64_kib_at_a_time_whatever_the_frame_decodes_to() {
        let zeros = vec![0; 4 * 1024 * 1024];
        let bytes = encoded("gzip", &zeros);
        assert!(bytes.len() < 8 * 1024, "{}", bytes.len());
        let frames = decode(Format::Gzip, &[&bytes]).await.unwrap();
        let largest = frames.iter().map(Bytes::len).max();
        // flate2's buffer of 32 KiB, and what its flush adds.
        assert!(
            largest <= Some(65 * 1024),
            "{largest:?} of {}",
            frames.len()
        );
        assert_eq!(frames.concat(), zeros);
    }

    #[tokio::test]
    async fn encoded_bytes_that_decode_to_nothing_are_cut_past_the_cap() {
        // Zlib's header, then empty stored blocks, each five bytes.
        let empty_block: &[u8] = &[0, 0, 0, 0xFF, 0xFF];
        let frame = empty_block.repeat(64 * 1024);
        let mut frames: Vec<&[u8]> = vec![&[0x78, 0x01]];
        frames.extend(std::iter::repeat_n(
            &frame[..],
            MAX_MESSAGE_BYTES / frame.len() + 1,
        ));
        let endless = decode(Format::Deflate, &frames).await;
        assert!(matches!(endless, Err(ReadError::Decode(_))), "{endless:?}");
    }

    #[test]
    fn the_encoding_is_read_whatever_its_case_and_several_are_not_decoded() {
        let of = |values: &[&'static str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(
                    header::CONTENT_ENCODING,
                    header::HeaderValue::from_static(value),
                );
            }
            coding(&headers)
        };
        assert_eq!(of(&[]), Coding::Identity);
        assert_eq!(of(&["identity"]), Coding::Identity);
        assert_eq!(of(&[" GZip "]), Coding::Gzip);
        assert_eq!(of(&["x-gzip"]), Coding::Gzip);
        assert_eq!(of(&["Deflate"]), Coding::Deflate);
        assert_eq!(of(&["br"]), Coding::Other);
        assert_eq!(of(&["gzip, br"]), Coding::Other);
        assert_eq!(of(&["gzip", "gzip"]), Coding::Other);
    }
}

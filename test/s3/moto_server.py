"""moto's S3 server (as `python -m moto.server`), checking SigV4 signatures over the
canonical request AWS builds.

AWS signs a canonical form of the request line: each path segment and each query name
and value decoded, then percent-encoded (RFC 3986 unreserved characters as they are),
query parameters sorted. moto 5.2 instead re-signs the URL as werkzeug hands it over,
with percent-escapes already decoded (prefix=a%2Fb arrives as prefix=a/b): every client
that signs the canonical form, as AWS requires, is refused with SignatureDoesNotMatch
on such a request (boto3's and the AWS SDK for C++'s ListObjectsV2 with a '/' in the
prefix, which pyarrow's S3 FileIO sends for every new file). Here the signature is
checked against the canonical form of the request line as the client sent it, the check
AWS makes: a request whose signature covers anything else is still refused.

Also, moto 5.2 names the root element of its CompleteMultipartUpload answer
CompleteMultipartUploadResponse where AWS says CompleteMultipartUploadResult; pyarrow
(which writes every file as a multipart upload) takes any other root for an error
embedded in a 200 answer and fails the write. The answer is renamed here.

usage: moto_server.py [moto.server arguments]   (test/s3/lib.sh start_s3)
"""
import threading
from urllib.parse import quote, unquote

import moto.server
from moto.iam import access_control

_request = threading.local()  # werkzeug's threaded server: one request per thread


def canonical_path(path: str) -> str:
    return "/".join(quote(unquote(seg), safe="-_.~") for seg in path.split("/"))


def canonical_query(query: str) -> str:
    out = []
    for piece in query.split("&") if query else []:
        name, _, value = piece.partition("=")
        out.append(quote(unquote(name), safe="-_.~") + "=" + quote(unquote(value), safe="-_.~"))
    return "&".join(out)


class RawRequestLine(moto.server.DomainDispatcherApplication):
    def __call__(self, environ, start_response):
        _request.uri = environ.get("RAW_URI") or environ.get("REQUEST_URI")
        if environ.get("REQUEST_METHOD") != "POST" or "uploadId=" not in environ.get("QUERY_STRING", ""):
            return super().__call__(environ, start_response)
        # CompleteMultipartUpload: the answer with AWS's root element
        started = []
        body = b"".join(super().__call__(environ, lambda status, headers, exc=None:
                                         started.append((status, headers, exc))))
        body = body.replace(b"CompleteMultipartUploadResponse", b"CompleteMultipartUploadResult")
        status, headers, exc = started[0]
        headers = [(k, str(len(body)) if k.lower() == "content-length" else v) for k, v in headers]
        start_response(status, headers, exc)
        return [body]


_create_aws_request = access_control.IAMRequestBase._create_aws_request


def create_canonical_aws_request(self):
    raw = getattr(_request, "uri", None)
    if raw:
        path, _, query = raw.partition("?")
        self._path = canonical_path(path) + ("?" + canonical_query(query) if query else "")
    return _create_aws_request(self)


access_control.IAMRequestBase._create_aws_request = create_canonical_aws_request
moto.server.DomainDispatcherApplication = RawRequestLine
moto.server.main()

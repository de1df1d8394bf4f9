/*
 * RecordingProxy: a plain HTTP forwarder between the RESTCatalog under test and skade's REST
 * port that records, per exchange, the method, path and query, the If-None-Match and
 * Idempotency-Key request headers and the answer's status.
 *
 * Invariants: requests and answers pass through byte for byte (bodies, Content-Encoding,
 * ETag, every end-to-end header), so the client sees what the server sent; only hop-by-hop
 * headers are left to the two HTTP stacks.  One request at a time per connection; the log is
 * a synchronized list, read by the test between steps (no locking beyond that).
 */
package skade.rest.clients;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;

final class RecordingProxy implements AutoCloseable {

  /** One request the client sent and the status it got. */
  record Exchange(String method, String path, String ifNoneMatch, String idempotencyKey,
                  int status) {
    @Override
    public String toString() {
      return method + " " + path + " -> " + status
          + (ifNoneMatch != null ? " [If-None-Match " + ifNoneMatch + "]" : "")
          + (idempotencyKey != null ? " [Idempotency-Key " + idempotencyKey + "]" : "");
    }
  }

  private static final Set<String> HOP = Set.of("connection", "content-length", "host",
      "transfer-encoding", "keep-alive", "upgrade", "expect", "te", "trailer",
      "proxy-connection", "http2-settings");

  private final String upstream;
  private final HttpServer server;
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private final List<Exchange> log = Collections.synchronizedList(new ArrayList<>());

  RecordingProxy(String upstream) throws IOException {
    this.upstream = upstream.endsWith("/") ? upstream.substring(0, upstream.length() - 1) : upstream;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::forward);
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.start();
  }

  String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/";
  }

  /** Everything recorded so far, in order. */
  List<Exchange> exchanges() {
    synchronized (log) {
      return new ArrayList<>(log);
    }
  }

  int mark() {
    return log.size();
  }

  /** The exchanges since mark. */
  List<Exchange> since(int mark) {
    List<Exchange> all = exchanges();
    return all.subList(mark, all.size());
  }

  private void forward(HttpExchange ex) throws IOException {
    try (ex) {
      String rawPath = ex.getRequestURI().getRawPath();
      String rawQuery = ex.getRequestURI().getRawQuery();
      String target = rawPath + (rawQuery != null ? "?" + rawQuery : "");
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readAllBytes();
      }
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(upstream + target))
          .method(ex.getRequestMethod(), body.length == 0 && !hasBody(ex)
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      for (Map.Entry<String, List<String>> h : ex.getRequestHeaders().entrySet()) {
        if (HOP.contains(h.getKey().toLowerCase())) {
          continue;
        }
        for (String v : h.getValue()) {
          req.header(h.getKey(), v);
        }
      }
      HttpResponse<byte[]> resp;
      try {
        resp = client.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
      log.add(new Exchange(ex.getRequestMethod(), target,
          ex.getRequestHeaders().getFirst("If-None-Match"),
          ex.getRequestHeaders().getFirst("Idempotency-Key"), resp.statusCode()));
      for (Map.Entry<String, List<String>> h : resp.headers().map().entrySet()) {
        if (HOP.contains(h.getKey().toLowerCase()) || h.getKey().startsWith(":")) {
          continue;
        }
        ex.getResponseHeaders().put(h.getKey(), h.getValue());
      }
      byte[] out = resp.body();
      boolean noBody = resp.statusCode() == 304 || resp.statusCode() == 204
          || "HEAD".equals(ex.getRequestMethod()) || out.length == 0;
      ex.sendResponseHeaders(resp.statusCode(), noBody ? -1 : out.length);
      if (!noBody) {
        try (OutputStream os = ex.getResponseBody()) {
          os.write(out);
        }
      }
    }
  }

  private static boolean hasBody(HttpExchange ex) {
    String m = ex.getRequestMethod();
    return "POST".equals(m) || "PUT".equals(m);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

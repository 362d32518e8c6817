package io.kinesisspark.aws

import java.net.{InetSocketAddress, URI}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, Executors, TimeUnit}

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The clients of one JVM keep their HTTP connections for the readers that JVM runs: an executor reading many
 * shards at once must not open a connection (and, against AWS, make a TLS handshake) per call. A real HTTP server
 * on 127.0.0.1 answers GetRecords and tells connections apart by the client's port.
 */
class KinesisClientsSuite extends AnyFunSuite {

  /** An empty GetRecords answer, in the request's encoding (the SDK speaks CBOR unless aws.cborEnabled=false). */
  private def answer(exchange: HttpExchange): Array[Byte] = {
    val cbor = Option(exchange.getRequestHeaders.getFirst("Content-Type")).exists(_.contains("cbor"))
    if (!cbor) """{"Records":[],"NextShardIterator":"it","MillisBehindLatest":0}""".getBytes(UTF_8)
    else {
      def text(s: String): Array[Byte] = (0x60 + s.length).toByte +: s.getBytes(UTF_8) // strings under 24 bytes
      Array(0xA3.toByte) ++ text("Records") ++ Array(0x80.toByte) ++ text("NextShardIterator") ++ text("it") ++
        text("MillisBehindLatest") ++ Array(0x00.toByte)
    }
  }

  test("readers calling at once share pooled connections rather than opening one per call") {
    val ports = ConcurrentHashMap.newKeySet[Integer]()
    val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64)
    server.setExecutor(Executors.newFixedThreadPool(32))
    server.createContext("/", (exchange: HttpExchange) => {
      ports.add(exchange.getRemoteAddress.getPort)
      exchange.getRequestBody.readAllBytes()
      Thread.sleep(20) // a GetRecords call takes tens of milliseconds: calls overlap, as an executor's readers' do
      val body = answer(exchange)
      exchange.getResponseHeaders.set("Content-Type", exchange.getRequestHeaders.getFirst("Content-Type"))
      exchange.sendResponseHeaders(200, body.length.toLong)
      exchange.getResponseBody.write(body)
      exchange.close()
    })
    server.start()
    try {
      val connection = AwsConnection("us-east-1", Some(URI.create(s"http://127.0.0.1:${server.getAddress.getPort}")),
        AwsCredentialsConfig.StaticKeys("AKIDEXAMPLE", "example-secret"))
      val api = KinesisClients.api(connection)
      val readers = 16
      val callsEach = 25
      val pool = Executors.newFixedThreadPool(readers)
      val start = new CountDownLatch(1)
      val failures = ConcurrentHashMap.newKeySet[Throwable]()
      (1 to readers).foreach { _ =>
        pool.submit(new Runnable {
          override def run(): Unit = {
            start.await()
            try { (1 to callsEach).foreach(_ => assert(api.getRecords("s", "it", 100).nextIterator.contains("it"))) }
            catch { case e: Throwable => failures.add(e) }
          }
        })
      }
      start.countDown()
      pool.shutdown()
      assert(pool.awaitTermination(60, TimeUnit.SECONDS))
      assert(failures.isEmpty, failures)
      info(s"${ports.size} connections for ${readers * callsEach} calls by $readers readers")
      // At most one connection per reader calling at once; URLConnection kept 5 per host and reopened the rest.
      assert(ports.size <= readers, s"${ports.size} connections for ${readers * callsEach} calls by $readers readers")
    } finally server.stop(0)
  }
}

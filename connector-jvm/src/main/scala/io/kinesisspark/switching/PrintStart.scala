package io.kinesisspark.switching

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys, KinesisSourceOptions}
import io.kinesisspark.aws.KinesisClients

/**
 * Prints the per-shard start a query with option `kclLeaseTable` or `awslabsCheckpointLocation` would make
 * ([[SwitchStart]]), without starting one, so it can be
 * reviewed first (and given as `initialPosition` instead). The query's options come as one JSON object on standard
 * input, so keys never show on a command line; the answer is one JSON object on standard output:
 * `{"initialPosition": "<the option's JSON>", "notes": ["<a warning>", ...]}`. An error is printed to standard error
 * and exits with status 1. The Python package runs it (`kinesis_spark.kcl_start`, and `python -m kinesis_spark.kcl_start_cli`).
 *
 * {{{
 *   echo '{"streamName": "orders", "region": "us-east-1", "kclLeaseTable": "orders-app"}' |
 *     java -cp kinesis-spark-assembly.jar:$SPARK_HOME/jars/'*' io.kinesisspark.switching.PrintStart
 * }}}
 */
object PrintStart {
  def main(args: Array[String]): Unit = {
    val out = try Right(answer(new String(System.in.readAllBytes(), StandardCharsets.UTF_8)))
    catch { case NonFatal(e) => Left(s"${e.getClass.getName}: ${e.getMessage}") }
    out match {
      case Right(json) =>
        println(json)
        sys.exit(0)
      case Left(error) =>
        System.err.println(error)
        sys.exit(1)
    }
  }

  /** The answer for the options in `input` (a JSON object of option names to texts). */
  def answer(input: String): String = {
    val options = JsonMethods.parseOpt(input) match {
      case Some(JObject(fields)) => fields.map {
        case (k, JString(v)) => k -> v
        case (k, other) => k -> JsonMethods.compact(JsonMethods.render(other))
      }.toMap
      case _ => throw KinesisErrors.notAnOptionsObject("PrintStart")
    }
    val parsed = KinesisSourceOptions.parse(options)
    val start = SwitchStart.plan(parsed, new Configuration(), KinesisClients.api(parsed.connection)).getOrElse(
      throw KinesisErrors.missingOption(KinesisOptionKeys.KclLeaseTable, "the lease table of the KCL application to " +
        s"continue from (or '${KinesisOptionKeys.AwslabsCheckpointLocation}', the checkpoint location of an awslabs " +
        "connector query)"))
    JsonMethods.compact(JsonMethods.render(JObject(
      "initialPosition" -> JString(start.position.json(parsed.streams)),
      "notes" -> JArray(start.notes.map(JString(_)).toList))))
  }
}

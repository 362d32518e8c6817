package io.kinesisspark.linkage

import java.io.File

/**
 * Checks a connector jar against one Spark line's jars: every reference the connector's classes make to Spark
 * (`org/apache/spark/`) or Scala (`scala/`) must link there: the class exists, and the method or field is declared by
 * it or an ancestor, as the JVM resolves them.
 *
 * One kind of unresolved reference is harmless, and reported apart: one made only from a method of ours that the
 * Spark line cannot call. Scala compiles a class implementing a Java interface with a forwarder for each of the
 * interface's default methods; built against a newer Spark, the jar has forwarders for methods (and of types) an older
 * Spark does not have, such as `Table.constraints()`. Such a method is unreachable on that line when no type of the
 * line above our class declares it (Spark cannot call what it does not know), the Spark the jar was built against
 * does (so it is an override, not an API of ours users may call), and no other code of ours calls it (on our class
 * or a type above it).
 *
 * A second kind is reported apart too: references from a class of ours that the line cannot load at all, because one
 * of its ancestors does not exist there (the JVM refuses to define it), so none of its code can run. The real-time
 * stream and reader implement interfaces only Spark 4.1 and later have; the connector makes them only where those load
 * (`io.kinesisspark.realtime.MicroBatchStreams`), which the line's smoke tests run.
 *
 * {{{
 *   java -jar linkage-check.jar --connector kinesis-spark-assembly_2.13-0.1.0.jar \
 *     --line .venv-spark4.0/lib/python3.11/site-packages/pyspark/jars \
 *     --built-against .venv/lib/python3.11/site-packages/pyspark/jars
 * }}}
 * Prints the unresolved references and a last line `LINKAGE {json}`; exits 1 if any is not harmless.
 */
object LinkageCheck {
  private val Checked = Seq("org/apache/spark/", "scala/")

  final case class Result(classes: Int, references: Int, unresolved: Seq[Reference], unreachable: Seq[Reference],
      unloadable: Seq[Reference] = Nil)

  def check(connector: File, line: Seq[File], builtAgainst: Seq[File]): Result = {
    val ours = References.of(connector)
    val checked = ours.references.filter(r => Checked.exists(r.owner.startsWith))
    val target = new ClassPath(connector +: line)
    val built = new ClassPath(connector +: builtAgainst)
    try {
      val broken = checked.filterNot(links(target, _))
      // Calls of method `m` of class `cls` from other methods of ours: on `cls` or a type above it. A forwarder's own
      // call of the interface's default method has the forwarder's name and descriptor, and makes no one call it.
      val calls = ours.references.collect { case r @ Reference(_, Some(m), false, _, from) if !from.contains(m) => m -> r.owner }
        .groupBy(_._1).map { case (m, owners) => m -> owners.map(_._2).toSet }
      def calledByUs(cls: String, m: Member): Boolean =
        calls.get(m).exists(owners => built.ancestors(cls).exists(owners))
      def declaredAbove(cp: ClassPath, cls: String, m: Member): Boolean =
        cp.ancestors(cls).exists(a => !ours.classes(a) && cp.info(a).exists(_.methods(m)))
      val (unloadable, loadable) = broken.partition(r => target.ancestors(r.fromClass).exists(target.info(_).isEmpty))
      val (unreachable, unresolved) = loadable.partition(r => r.fromMethod.exists(m =>
        !calledByUs(r.fromClass, m) && declaredAbove(built, r.fromClass, m) && !declaredAbove(target, r.fromClass, m)))
      Result(ours.classes.size, checked.size, unresolved, unreachable, unloadable)
    } finally {
      target.close()
      built.close()
    }
  }

  private def links(cp: ClassPath, r: Reference): Boolean = r.member match {
    case None => cp.info(r.owner).isDefined
    case Some(m) => cp.info(r.owner).isDefined && (if (r.isField) cp.resolvesField(r.owner, m) else cp.resolvesMethod(r.owner, m))
  }

  private def jarsOf(dir: String): Seq[File] = {
    val files = Option(new File(dir).listFiles()).getOrElse(throw new IllegalArgumentException(s"$dir is not a folder"))
    val jars = files.filter(_.getName.endsWith(".jar")).sortBy(_.getName).toSeq
    if (jars.isEmpty) throw new IllegalArgumentException(s"$dir holds no jars")
    jars
  }

  private def json(s: String): String = "\"" + s.flatMap {
    case '"' => "\\\""
    case '\\' => "\\\\"
    case c => c.toString
  } + "\""

  def main(args: Array[String]): Unit = {
    val options = args.grouped(2).collect { case Array(k, v) => k -> v }.toMap
    def required(key: String) = options.getOrElse(key, {
      System.err.println("usage: LinkageCheck --connector JAR --line SPARK_JARS_DIR [--built-against SPARK_JARS_DIR]")
      sys.exit(2)
    })
    val line = jarsOf(required("--line"))
    val result = check(new File(required("--connector")), line, options.get("--built-against").map(jarsOf).getOrElse(line))
    def list(title: String, refs: Seq[Reference]): Unit = {
      println(s"$title: ${refs.size}")
      refs.groupBy(_.target).toSeq.sortBy(_._1).foreach { case (target, from) =>
        println(s"  $target  <- ${from.map(_.site).distinct.sorted.mkString(", ")}")
      }
    }
    println(s"${result.classes} classes of the connector, ${result.references} references to Spark and Scala")
    list("unresolved", result.unresolved)
    list("unresolved but unreachable on this line (forwarders to methods only the built-against Spark has)",
      result.unreachable)
    list("unresolved in classes of ours this line cannot load (an ancestor is missing)", result.unloadable)
    def targets(refs: Seq[Reference]) = refs.map(_.target).distinct.sorted.map(json).mkString("[", ", ", "]")
    println(s"""LINKAGE {"classes": ${result.classes}, "references": ${result.references}, """ +
      s""""unresolved": ${targets(result.unresolved)}, "unreachable": ${targets(result.unreachable)}, """ +
      s""""unloadable": ${result.unloadable.map(_.fromClass).distinct.sorted.map(json).mkString("[", ", ", "]")}}""")
    sys.exit(if (result.unresolved.isEmpty) 0 else 1)
  }
}

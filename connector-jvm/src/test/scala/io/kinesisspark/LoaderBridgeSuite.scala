package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.sink.KinesisWriterCommitMessage

class LoaderBridgeSuite extends AnyFunSuite {
  /** Loads `name` itself, from the same class file, as a session class loader of Spark Connect does the jar. */
  private final class SecondLoader(name: String) extends ClassLoader(getClass.getClassLoader) {
    override def loadClass(n: String, resolve: Boolean): Class[_] =
      if (n != name) super.loadClass(n, resolve)
      else Option(findLoadedClass(n)).getOrElse {
        val in = getParent.getResourceAsStream(n.replace('.', '/') + ".class")
        val bytes = try in.readAllBytes() finally in.close()
        defineClass(n, bytes, 0, bytes.length)
      }
  }

  private val metrics = Map("recordsWritten" -> 30L, "putRecordsCalls" -> 2L)

  test("an object of the connector's class loader is returned as it is") {
    val message = KinesisWriterCommitMessage(metrics)
    assert(LoaderBridge.adopt[KinesisWriterCommitMessage](message).exists(_ eq message))
  }

  test("an object of the same class from another loader is taken over, with its contents") {
    val name = classOf[KinesisWriterCommitMessage].getName
    val foreignClass = new SecondLoader(name).loadClass(name)
    assert(foreignClass != classOf[KinesisWriterCommitMessage])
    val foreign = foreignClass.getConstructor(classOf[Map[_, _]]).newInstance(metrics).asInstanceOf[AnyRef]
    assert(!foreign.isInstanceOf[KinesisWriterCommitMessage]) // what Spark hands over with addArtifacts
    assert(LoaderBridge.adopt[KinesisWriterCommitMessage](foreign).map(_.metrics).contains(metrics))
  }

  test("anything else is no such object") {
    assert(LoaderBridge.adopt[KinesisWriterCommitMessage]("recordsWritten").isEmpty)
    assert(LoaderBridge.adopt[KinesisWriterCommitMessage](null).isEmpty)
  }
}

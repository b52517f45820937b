export default function P() { return <h1>actions</h1> }
